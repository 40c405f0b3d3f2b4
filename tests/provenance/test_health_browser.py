"""The health page in Chromium: the trend chart draws under the strict CSP."""

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from tests.conftest import node_event

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_trend_chart_draws_and_findings_open_their_node(live_server, page, project, ingest):
    ingest(node_event("a", "t"), node_event("b", "t"), node_event("loop", "t2", parents=["loop"]))
    call_command("check_dag_health", stdout=open("/dev/null", "w"))
    user = get_user_model().objects.create_user("ann")
    project.members.add(user)
    client = Client()
    client.force_login(user)
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                               "url": live_server.url}])
    problems = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))

    page.goto(f"{live_server.url}/p/acme/health/")
    page.wait_for_selector("#health-trend[data-rendered='true'] .main-svg")
    assert page.locator("#health-trend .bars path").count() >= 2
    assert page.locator("#kind-orphan tbody tr").count() == 2
    assert problems == []

    page.locator("#kind-cycle a", has_text="loop").click()
    page.wait_for_url("**/p/acme/traces/t2/?node=loop")
