"""The bad answers list in Chromium at 1440px: every column, and the row's
Investigate button, can be seen even with long ids and every reason listed."""

import pytest

from tests.support.browser import signed_in
from tests.support.events import fuse_event, node_event, review_event

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_investigate_stays_within_the_card(live_server, page, member, ingest):
    answer = "a2e8cf061786400a32683fc8ceb6e5c5"  # as long as the SDK's content-hash ids
    ingest(node_event(answer, "story-20261130-1211", agent_id="retrieval_agent_v2", source_type="final_answer",
                      confidence=0.19),
           fuse_event(answer, trace_id="story-20261130-1211"), review_event("story-20261130-1211", "incorrect"),
           node_event("ticket-20261201-122730:final", "ticket-20261201-122730", agent_id="responder",
                      source_type="final_answer", confidence=0.47),
           review_event("ticket-20261201-122730", "incorrect"))
    problems = signed_in(page, live_server, member)
    page.goto(f"{live_server.url}/p/acme/bad-answers/")
    card = page.locator(".table-card").bounding_box()
    for button in page.get_by_role("link", name="Investigate →").all():
        box = button.bounding_box()
        assert box["x"] + box["width"] <= card["x"] + card["width"]
    assert problems == []
