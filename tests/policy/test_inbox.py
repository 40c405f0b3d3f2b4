"""The escalation inbox: open escalations newest first with their node, fuse
history and trace; a person's verdict is a review that closes the escalation
and counts on Calibration; the navigation shows how many are open."""

from datetime import timedelta

import pytest

from provenance.models import Escalation, Review
from tests.support.events import BASE_TIME, fuse_event, node_event


@pytest.fixture
def member_role():
    """These tests change things from the pages: an editor may."""
    return "editor"


INBOX = "/policy/acme/inbox/"


def escalation_event(product_id: str, trace_id: str, reason: str = "3 fuses in a row", *, minutes: int = 0):
    return {"id": f"esc-{product_id}", "type": "escalation",
            "timestamp": (BASE_TIME + timedelta(minutes=minutes)).isoformat(),
            "body": {"trace_id": trace_id, "product_id": product_id, "reason": reason, "by_agent_id": "reasoning"}}


def escalated_retry_chain(ingest, trace_id="t1", minutes=0, reason="3 fuses in a row"):
    ingest(
        node_event(f"{trace_id}-a1", trace_id, confidence=0.2, agent_id="retrieval_agent", content="first try"),
        node_event(f"{trace_id}-a2", trace_id, confidence=0.3, agent_id="retrieval_agent", content="second try",
                   retry_of=f"{trace_id}-a1", attempt=2, seconds=1),
        fuse_event(f"{trace_id}-a1", trace_id=trace_id, reason="confidence below the block threshold",
                   reason_code="below_block", policy_version=0),
        fuse_event(f"{trace_id}-a2", trace_id=trace_id, reason="confidence below the block threshold",
                   reason_code="below_block", policy_version=0),
        escalation_event(f"{trace_id}-a2", trace_id, reason, minutes=minutes),
    )


def test_open_escalations_are_listed_newest_first_with_their_fuse_history(member, ingest):
    escalated_retry_chain(ingest, "t1", minutes=0)
    escalated_retry_chain(ingest, "t2", minutes=5)
    page = member.get(INBOX).content.decode()
    assert page.index("t2-a2") < page.index("t1-a2")
    assert "2 open" in page
    assert "second try" in page
    assert page.count("below_block") >= 4  # both attempts of both chains
    assert "/p/acme/traces/t1" in page


def test_a_verdict_closes_the_escalation_and_is_a_review(member, ingest, api):
    escalated_retry_chain(ingest)
    escalation = Escalation.objects.get()
    response = member.post(f"{INBOX}{escalation.pk}/verdict", {"verdict": "incorrect", "comment": "stale policy",
                                                                 "corrected": "Refund issued on 4 March"})
    assert response.status_code == 302
    escalation.refresh_from_db()
    assert escalation.closed_at is not None
    review = Review.objects.get()
    assert (review.product_id, review.verdict) == ("t1-a2", "incorrect")
    assert "Corrected answer: Refund issued on 4 March" in review.comment and "mia" in review.comment
    node = api.get("/api/v1/traces/t1/nodes/t1-a2").json()
    assert node["reviews"][0]["verdict"] == "incorrect"
    page = member.get(INBOX).content.decode()
    assert "Nothing waits for a person" in page
    assert "closed" in page


def test_the_navigation_counts_open_escalations(member, ingest):
    escalated_retry_chain(ingest, "t1")
    escalated_retry_chain(ingest, "t2")
    page = member.get("/policy/acme/").content.decode()
    assert 'aria-label="2 open escalations"' in page


def test_a_verdict_without_a_choice_changes_nothing(member, ingest):
    escalated_retry_chain(ingest)
    escalation = Escalation.objects.get()
    response = member.post(f"{INBOX}{escalation.pk}/verdict", {"verdict": "maybe"}, follow=True)
    assert "Choose a verdict" in response.content.decode()
    escalation.refresh_from_db()
    assert escalation.closed_at is None and not Review.objects.exists()


def test_another_projects_escalation_is_not_found(member, make_project, ingest, api):
    other, key = make_project("globex")
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    escalated_retry_chain(lambda *events: ingest(*events, client=client))
    escalation = Escalation.objects.get()
    assert member.post(f"{INBOX}{escalation.pk}/verdict", {"verdict": "correct"}).status_code == 404
    assert member.get("/policy/globex/inbox/").status_code == 404
    assert "Nothing waits" in member.get(INBOX).content.decode()


def test_agent_text_in_the_inbox_is_escaped(member, ingest):
    escalated_retry_chain(ingest, reason="<script>alert('x')</script>")
    page = member.get(INBOX).content.decode()
    assert "<script>alert('x')</script>" not in page
    assert "&lt;script&gt;" in page
