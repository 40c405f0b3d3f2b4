"""The fuse loop in Chromium: apply Calibration's suggested threshold, see the
new version on the policy page, resolve an escalation from the inbox and see
the verdict counted on Calibration."""

from datetime import timedelta

import pytest
from django.utils import timezone

from provenance.ingest.write import ingest_events
from tests.policy.calibration_data import reviewed_nodes
from tests.support.browser import screenshot, signed_in
from tests.support.events import node_event


@pytest.fixture
def member_role():
    """These tests change things from the pages: an editor may."""
    return "editor"


pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RANGE = "range=24h"


def escalation(product_id: str, trace_id: str, at) -> dict:
    return {"id": f"esc-{product_id}", "type": "escalation", "timestamp": at.isoformat(),
            "body": {"trace_id": trace_id, "product_id": product_id, "reason": "3 fuses in a row: below_block",
                     "by_agent_id": "reasoning_agent"}}


def reviewed_count(page) -> int:
    page.wait_for_selector("#metrics-root[data-state=ready]", timeout=15000)
    card = page.locator(".metric-card", has_text="Reviewed answers").locator(".value")
    return int(card.text_content().replace(",", ""))


def test_apply_the_threshold_then_resolve_an_escalation(live_server, page, member, project):
    start = timezone.now() - timedelta(hours=2)
    stuck = node_event("stuck", "t-stuck", confidence=0.2, agent_id="retrieval_agent_v2", content="a stale fragment")
    stuck["timestamp"] = (start + timedelta(minutes=30)).isoformat()
    result = ingest_events(project, [*reviewed_nodes(60, start=start), stuck,
                                     escalation("stuck", "t-stuck", start + timedelta(minutes=31))])
    assert result.errors == []
    problems = signed_in(page, live_server, member)

    page.goto(f"{live_server.url}/metrics/acme/calibration/?{RANGE}")
    assert reviewed_count(page) == 60
    suggested = page.locator("#suggested-block").text_content()
    page.get_by_role("button", name="Apply this threshold").click()
    # The price first, nothing written yet; then the confirmation.
    page.wait_for_selector("#apply-price")
    assert page.locator("#apply-price tr[data-figure]").count() == 3
    assert page.locator("#apply-price th", has_text=f"with block {suggested}").count() == 1
    screenshot(page, "apply-threshold-preview.png")
    page.locator("#confirm-threshold").click()
    page.wait_for_url(f"{live_server.url}/policy/acme/")
    assert page.locator("#current-version").text_content() == "version 1"
    assert "Applied as version 1" in page.locator(".messages").text_content()
    assert page.locator("input[name=row_block]").first.input_value() == suggested
    row = page.locator("#policy-history tr[data-version='1']")
    assert "Youden's J" in row.text_content()
    # The long note and the row's diff link sit side by side, not on top of each other.
    note_end = row.locator(".note-cell").evaluate(
        "(cell) => { const text = document.createRange(); text.selectNodeContents(cell);"
        " return text.getBoundingClientRect().right; }")
    assert row.get_by_role("link", name="diff").bounding_box()["x"] >= note_end

    assert page.locator("#nav-inbox .nav-count").text_content() == "1"
    page.locator("#nav-inbox").click()
    entry = page.locator("[data-escalation]")
    assert "a stale fragment" in entry.text_content()
    entry.get_by_label("incorrect").check()
    entry.locator("input[name=comment]").fill("the fragment quotes a 2019 policy")
    entry.get_by_role("button", name="Give verdict").click()
    page.wait_for_selector("#inbox-empty")
    assert page.locator("#nav-inbox .nav-count").count() == 0

    page.goto(f"{live_server.url}/metrics/acme/calibration/?{RANGE}")
    assert reviewed_count(page) == 61
    assert problems == []
