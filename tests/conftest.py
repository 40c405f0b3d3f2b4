"""Shared fixtures: projects, API keys and API clients that go through HTTP, and a
signed-in project member for the pages."""

import itertools
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from denoise_dashboard import outage
from provenance.models import Project

_counter = itertools.count()


@pytest.fixture(autouse=True)
def own_limit_counters(settings):
    """Each test counts rate limits and failed sign-ins in a namespace of its own."""
    settings.LIMITS_KEY_PREFIX = f"test-{uuid.uuid4().hex}"
    # Nor does a database outage simulated by an earlier test make this one answer 503.
    outage.forget_unreachable()


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


MEMBER_USERNAME, MEMBER_PASSWORD = "mia", "pw-mia-12345"


@pytest.fixture
def member_user(project, settings):
    """A user of `project` who can also sign in through the login form."""
    # A fast hasher: the default one is slow on purpose.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    user = get_user_model().objects.create_user(MEMBER_USERNAME, password=MEMBER_PASSWORD)
    project.members.add(user)
    return user


@pytest.fixture
def member(member_user) -> Client:
    """A test client signed in as `member_user`."""
    client = Client()
    client.force_login(member_user)
    return client


BASE_TIME = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def node_event(product_id: str, trace_id: str = "t1", *, parents=(), seconds: float = 0, event_id=None, **body):
    """A `node` event as an agent would send it."""
    return {
        "id": event_id or f"ev-{product_id}",
        "type": "node",
        "timestamp": (BASE_TIME + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z"),
        "body": {"trace_id": trace_id, "product_id": product_id, "agent_id": body.pop("agent_id", "agent"),
                 "parent_ids": list(parents), **body},
    }


def fuse_event(product_id: str, decision: str = "block", trace_id: str = "t1", *, event_id=None, **body):
    return {
        "id": event_id or f"fuse-{product_id}-{decision}",
        "type": "fuse",
        "timestamp": BASE_TIME.isoformat(),
        "body": {"trace_id": trace_id, "product_id": product_id, "decision": decision,
                 "reason": body.pop("reason", "below threshold"), "threshold": 0.5, "by_agent_id": "router", **body},
    }


def review_event(trace_id: str, verdict: str, product_id: str | None = None, *, event_id=None):
    body = {"trace_id": trace_id, "verdict": verdict}
    if product_id:
        body["product_id"] = product_id
    return {"id": event_id or f"review-{trace_id}-{verdict}", "type": "review", "timestamp": BASE_TIME.isoformat(),
            "body": body}


@pytest.fixture
def ingest(api):
    """Posts events through the HTTP API and returns the parsed 207 body."""

    def post(*events, client=None):
        response = (client or api).post("/api/v1/ingest", {"batch": list(events)}, format="json")
        assert response.status_code == 207, response.content
        return response.json()

    return post


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
]


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


def signed_in(page, live_server, member: Client) -> list[str]:
    """Gives `page` the session of the `member` client; returns the list that
    collects the page's console errors and uncaught exceptions from then on."""
    cookie = django_settings.SESSION_COOKIE_NAME
    page.context.add_cookies([{"name": cookie, "value": member.cookies[cookie].value, "url": live_server.url}])
    problems = []
    page.on("console", lambda message: problems.append(message.text)
            if message.type == "error" and not message.location.get("url", "").endswith("/favicon.ico") else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    return problems
