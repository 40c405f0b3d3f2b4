"""The contract: "Events are idempotent by `id` within a project: sending the
same event again stores nothing new and answers 200" — across batches and
across types, not only within one batch."""

import pytest

from provenance.models import Escalation, Fuse, Node, Review
from tests.provenance.stored import statuses, stored_rows
from tests.support.events import BASE_TIME, fuse_event, node_event, review_event


def escalation_event(product_id: str, event_id: str):
    return {"id": event_id, "type": "escalation", "timestamp": BASE_TIME.isoformat(),
            "body": {"trace_id": "t1", "product_id": product_id, "reason": "stuck", "by_agent_id": "router"}}


def test_an_event_id_reused_for_another_node_in_a_later_batch_stores_nothing(project, ingest):
    assert statuses(ingest(node_event("p1", event_id="ev-1"))) == {"ev-1": 201}
    before = stored_rows(project)

    again = ingest(node_event("p2", event_id="ev-1", content="another product"))

    assert statuses(again) == {"ev-1": 200}
    assert stored_rows(project) == before
    assert list(Node.objects.filter(project=project).values_list("product_id", flat=True)) == ["p1"]


LATER = {
    "review": lambda event_id: review_event("t1", "correct", "p1", event_id=event_id),
    "fuse": lambda event_id: fuse_event("p1", "block", event_id=event_id),
    "escalation": lambda event_id: escalation_event("p1", event_id),
    "node": lambda event_id: node_event("p9", event_id=event_id),
}


@pytest.mark.parametrize("first", ["node", "review", "fuse", "escalation"])
@pytest.mark.parametrize("later", ["node", "review", "fuse", "escalation"])
def test_an_event_id_reused_by_another_type_in_a_later_batch_stores_nothing(project, ingest, first, later):
    if first != "node":
        ingest(node_event("p1", event_id="the-node"))
    assert statuses(ingest(LATER[first]("ev-x"))) == {"ev-x": 201}
    before = stored_rows(project)

    again = ingest(LATER[later]("ev-x"))

    assert statuses(again) == {"ev-x": 200}
    assert stored_rows(project) == before


def test_within_one_batch_too_a_reused_id_is_stored_once(project, ingest):
    result = ingest(node_event("p1", event_id="ev-1"), review_event("t1", "correct", event_id="ev-1"))
    assert [s["status"] for s in result["successes"]] == [201, 200]
    assert (Node.objects.count(), Review.objects.count()) == (1, 0)


def test_a_refused_node_leaves_its_event_id_free_for_a_later_batch(project, ingest):
    ingest(node_event("p1", event_id="ev-1"))
    refused = ingest(node_event("p1", event_id="ev-2"), node_event("p2", event_id="ev-3"),
                     node_event("p2", event_id="ev-4"))
    assert statuses(refused) == {"ev-2": 409, "ev-3": 201, "ev-4": 409}

    fixed = ingest(node_event("p5", event_id="ev-2"), review_event("t1", "correct", event_id="ev-4"))

    assert statuses(fixed) == {"ev-2": 201, "ev-4": 201}
    assert (Node.objects.count(), Review.objects.count(), Fuse.objects.count(), Escalation.objects.count()) == (
        3, 1, 0, 0)
