"""Browser tests against a live ASGI server.

Websockets need an ASGI server, so the server is Daphne, run as a child
process on the pytest-django test database (Channels' own live-server test case
does the same). Test data is committed (`transactional_db`) so the server sees
it. The server keeps its in-process channel layer: ingest that should reach open
pages goes through the server's HTTP API, as an agent's would.
"""

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.support.accounts import person
from tests.support.serving import REPO, database_url, free_port, wait_until_serving


class LiveServer:
    def __init__(self, url: str, process: subprocess.Popen, log: Path):
        self.url = url
        self.process = process
        self.log = log

    def ingest(self, api_key: str, *events) -> dict:
        response = httpx.post(f"{self.url}/api/v1/ingest", json={"batch": list(events)},
                              headers={"Authorization": f"Bearer {api_key}"}, timeout=30)
        assert response.status_code == 207, response.text
        assert response.json()["errors"] == [], response.text
        return response.json()


@pytest.fixture(scope="session")
def asgi_live_server(django_db_setup, django_db_blocker, tmp_path_factory):
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("browser tests run against PostgreSQL")
    port = free_port()
    log = tmp_path_factory.mktemp("daphne") / "server.log"
    env = {key: value for key, value in os.environ.items() if key not in {"REDIS_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"}}
    env.update(DATABASE_URL=database_url(connection.settings_dict), EMBEDDED_SCHEDULER="0", PYTHONUNBUFFERED="1")
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "denoise_dashboard.asgi:application"],
            cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    wait_until_serving(url, process, 60, log, "daphne")
    yield LiveServer(url, process, log)
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


@pytest.fixture
def tenant_role():
    """The role of the tenant's member: a module whose tests change things gives its own."""
    return "viewer"


@pytest.fixture
def tenant(transactional_db, tenant_role):
    """A project with an API key and a member who can sign in."""
    from tenancy.models import Project

    project = Project.objects.create(slug="acme", name="Acme support")
    _, key = project.issue_api_key()
    user = person(project, tenant_role, "mia", "pw-mia-12345")
    return project, key, user


@pytest.fixture
def watched_page(page):
    """The page, with every script error, failed request and dialog recorded."""
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda message: problems.append(f"console: {message.text}")
            if message.type == "error" and not message.location.get("url", "").endswith("/favicon.ico") else None)
    page.on("dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    page.problems = problems
    return page


