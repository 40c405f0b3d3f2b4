"""Shared fixtures: projects, API keys and API clients that go through HTTP, and a
signed-in project member for the pages."""

import ipaddress
import itertools
import socket
import uuid

import pytest
from django.test import Client
from rest_framework.test import APIClient

from denoise_dashboard import outage
from tenancy.models import Project
from tests.support.accounts import MEMBER_PASSWORD, MEMBER_USERNAME, person
from tests.support.alerts import SECRET
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.receiver import pagerduty_problems, running, slack_problems, smtp_server

_counter = itertools.count()


@pytest.fixture(autouse=True, scope="session")
def static_files_by_plain_name():
    """The in-process live server serves static files from the finders, which know no hashed
    names: pages rendered here name them plainly even when `make run` left a manifest in
    STATIC_ROOT (`manage.py serve` in a test reads that manifest and serves the hashed copies)."""
    from django.contrib.staticfiles.storage import staticfiles_storage

    staticfiles_storage.hashed_files = {}


@pytest.fixture(autouse=True)
def own_limit_counters(settings):
    """Each test counts rate limits and failed sign-ins in a namespace of its own."""
    settings.LIMITS_KEY_PREFIX = f"test-{uuid.uuid4().hex}"
    # Nor does a database outage simulated by an earlier test make this one answer 503.
    outage.forget_unreachable()


@pytest.fixture(autouse=True)
def no_outside_dns(monkeypatch):
    """Webhook host names are resolved when a destination is saved: the tests'
    names (example.org, …) must not reach a real resolver. Loopback names and
    literal addresses still resolve; any other name does not."""
    real = socket.getaddrinfo

    def local_only(host, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name.rstrip(".").lower() in ("localhost", "localhost.localdomain") or _is_address(name):
            return real(host, *args, **kwargs)
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known (no outside DNS in tests)")

    monkeypatch.setattr(socket, "getaddrinfo", local_only)


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    return True


@pytest.fixture
def make_project(db):
    def make(slug: str | None = None, **fields) -> tuple[Project, str]:
        project = Project.objects.create(slug=slug or f"proj-{next(_counter)}", **fields)
        _, raw_key = project.issue_api_key()
        return project, raw_key

    return make


@pytest.fixture
def project_and_key(make_project):
    return make_project("acme")


@pytest.fixture
def project(project_and_key):
    return project_and_key[0]


@pytest.fixture
def api(project_and_key):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {project_and_key[1]}")
    return client


@pytest.fixture
def other_api(make_project):
    _, key = make_project("globex")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


@pytest.fixture
def member_role():
    """The role `member_user` has: a module whose tests change things gives its own."""
    return "viewer"


@pytest.fixture
def member_user(project, settings, member_role):
    """A user of `project` who can also sign in through the login form."""
    # A fast hasher: the default one is slow on purpose.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return person(project, member_role, MEMBER_USERNAME, MEMBER_PASSWORD)


@pytest.fixture
def member(member_user) -> Client:
    """A test client signed in as `member_user`."""
    client = Client()
    client.force_login(member_user)
    return client


@pytest.fixture
def ingest(api):
    """Posts events through the HTTP API and returns the parsed 207 body."""

    def post(*events, client=None):
        response = (client or api).post("/api/v1/ingest", {"batch": list(events)}, format="json")
        assert response.status_code == 207, response.content
        return response.json()

    return post


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by Playwright (never a downloaded browser).

    Module-scoped: Playwright's sync API keeps an event loop on the main thread
    while it runs, which other modules' async_to_sync calls must not meet."""
    import os

    # Playwright's sync API runs an event loop; Django must still allow sync DB calls from tests.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def receiver(settings):
    """A signature-checking webhook receiver on loopback, signing with alerts' SECRET."""
    settings.WEBHOOK_ALLOW_PRIVATE = True
    settings.WEBHOOK_TIMEOUT_SECONDS = 2
    settings.WEBHOOK_RETRY_BASE_SECONDS = 0
    with running(SECRET) as hook:
        yield hook


@pytest.fixture
def slack(settings):
    """A stand-in for a Slack incoming webhook that checks Block Kit payloads."""
    settings.WEBHOOK_ALLOW_PRIVATE = True
    settings.WEBHOOK_TIMEOUT_SECONDS = 2
    settings.WEBHOOK_RETRY_BASE_SECONDS = 0
    with running(check=slack_problems) as hook:
        yield hook


@pytest.fixture
def pagerduty(settings):
    """A stand-in for PagerDuty's Events API v2 (PAGERDUTY_EVENTS_URL points at it)."""
    settings.WEBHOOK_TIMEOUT_SECONDS = 2
    settings.WEBHOOK_RETRY_BASE_SECONDS = 0
    with running(check=pagerduty_problems, default=202) as hook:
        settings.PAGERDUTY_EVENTS_URL = hook.url
        yield hook


@pytest.fixture
def smtp(settings):
    """A real SMTP server (aiosmtpd) on loopback; EMAIL_HOST/EMAIL_PORT point at it."""
    settings.WEBHOOK_TIMEOUT_SECONDS = 2
    settings.WEBHOOK_RETRY_BASE_SECONDS = 0
    with smtp_server() as box:
        settings.ALERT_SMTP = {**settings.ALERT_SMTP, "host": "127.0.0.1", "port": box.port}
        yield box
