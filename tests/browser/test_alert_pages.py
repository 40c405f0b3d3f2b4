"""The alert pages in Chromium under the strict CSP: build a rule with the form
(adding and removing rows), preview it, create it, send a test, disable and
mute it, then follow an example trace from the alert history."""

from datetime import timedelta

import pytest
from django.utils import timezone

from alerts import evaluation
from provenance.ingest.write import ingest_events
from tests.support.alerts import SECRET
from tests.support.browser import signed_in
from tests.support.events import node_event


@pytest.fixture
def member_role():
    """These tests change things from the pages: an editor may."""
    return "editor"


pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_build_preview_create_test_mute_and_follow_history(live_server, page, project, member, receiver):
    now = timezone.now()
    events = []
    for i in range(3):
        event = node_event(f"n{i}", f"ticket-{i}", step="entity_extraction", fuse={"decision": "block", "reason": "x"})
        event["timestamp"] = (now - timedelta(seconds=90 - i)).isoformat()
        events.append(event)
    ingest_events(project, events)
    problems = signed_in(page, live_server, member)

    page.goto(f"{live_server.url}/alerts/acme/")
    page.get_by_role("link", name="New rule").click()
    page.fill("input[name=name]", "Fuse storm")
    first = page.locator("tr.condition-row").nth(0)
    first.locator("select[name=condition_metric]").select_option("fuse_rate")
    first.locator("input[name=condition_threshold]").fill("20")

    page.get_by_role("button", name="Add condition").click()
    assert page.locator("tr.condition-row").count() == 2
    second = page.locator("tr.condition-row").nth(1)
    second.locator("select[name=condition_metric]").select_option("failure_rate")
    second.locator("input[name=condition_step]").fill("entity_extraction")
    second.locator("input[name=condition_threshold]").fill("70")
    page.get_by_role("button", name="Add condition").click()
    page.locator("tr.condition-row").nth(2).get_by_role("button", name="Remove").click()
    assert page.locator("tr.condition-row").count() == 2

    page.get_by_role("button", name="Add destination").click()
    page.fill("input[name=destination_address]", receiver.url)
    page.fill("input[name=destination_secret]", SECRET)

    page.get_by_role("button", name="Preview").click()
    preview = page.locator("#preview")
    assert "As of now this rule would be: holding" in preview.inner_text()
    assert "value 1 — holds" in preview.inner_text()
    assert page.locator("tr.condition-row").count() == 2, "the rows survive the preview"

    page.get_by_role("button", name="Create rule").click()
    page.wait_for_url("**/alerts/acme/*/")
    assert page.locator("#rule-state").inner_text() == "ok"
    assert "holding" in page.locator("#preview").inner_text()

    page.locator("#send-test-button").click()
    page.wait_for_selector("#deliveries tr.attempt-ok")
    assert receiver.received[0].verified and receiver.received[0].json["type"] == "alert.test"
    assert "200" in page.locator("#deliveries tr.attempt-ok").first.inner_text()

    page.get_by_role("button", name="Disable").click()
    page.get_by_role("button", name="Enable").wait_for()
    page.get_by_role("button", name="Enable").click()
    page.get_by_role("button", name="Disable").wait_for()

    page.locator("select[name=minutes]").select_option("60")
    page.locator("#mute-for-button").click()
    assert "Muted until" in page.locator("#mute-status").inner_text()

    evaluation.tick(timezone.now())
    page.goto(f"{live_server.url}/alerts/acme/history/")
    row = page.locator("tr.event-firing").first
    assert "Fuse storm" in row.inner_text()
    assert "muted: not sent" in row.inner_text()
    row.locator("a.trace-link").first.click()
    page.wait_for_url("**/p/acme/traces/ticket-*/")
    assert len(receiver.received) == 1, "muted: the firing was not sent"
    assert problems == []
