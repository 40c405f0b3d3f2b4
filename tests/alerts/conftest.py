"""Alert fixtures: rules created through the API, evaluation at simulated
minutes. The loopback webhook receiver (`receiver`) is the root conftest's:
the alerts page's browser test uses it too."""

import io

import pytest
from django.core.management import call_command

from tests.support.alerts import at_minute
from tests.support.receiver import pagerduty_problems, running, slack_problems, smtp_server


@pytest.fixture
def create_rule(api):
    def create(client=None, **spec) -> dict:
        body = {"name": spec.pop("name", "rule"), "match": "all", "for": "0m", "destinations": [], **spec}
        response = (client or api).post("/api/v1/alert-rules", body, format="json")
        assert response.status_code == 201, response.content
        return response.json()

    return create


@pytest.fixture
def evaluate():
    """Runs `manage.py evaluate_alerts --now` at BASE_TIME + minute."""

    def run(minute: float):
        call_command("evaluate_alerts", "--now", at_minute(minute).isoformat(), stdout=io.StringIO())

    return run


@pytest.fixture
def alert_events(api):
    def fetch(**params) -> list[dict]:
        response = api.get("/api/v1/alerts", params)
        assert response.status_code == 200, response.content
        return response.json()

    return fetch


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
