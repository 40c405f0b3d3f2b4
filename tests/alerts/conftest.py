"""Alert fixtures: rules created through the API, evaluation at simulated
minutes. The loopback webhook receiver (`receiver`) is the root conftest's:
the alerts page's browser test uses it too."""

import io

import pytest
from django.core.management import call_command

from tests.support.alerts import at_minute


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
