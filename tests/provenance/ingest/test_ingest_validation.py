"""Each event is judged on its own: a bad event gets a 400 naming the field and
the reason, and the good events around it in the same batch are stored."""

import pytest

from provenance.models import Node
from tests.provenance.stored import error_for, statuses, stored_rows
from tests.support.events import BASE_TIME, fuse_event, node_event, review_event


def node_with(**changes):
    """A node event with body fields changed; a value of ... removes the field."""
    event = node_event("bad", event_id="ev-bad")
    for name, value in changes.items():
        if value is ...:
            event["body"].pop(name, None)
        else:
            event["body"][name] = value
    return event


def event_with(event=None, **changes):
    """An event with envelope fields changed; a value of ... removes the field."""
    event = event or node_event("bad", event_id="ev-bad")
    for name, value in changes.items():
        if value is ...:
            event.pop(name, None)
        else:
            event[name] = value
    return event


BAD_EVENTS = {
    "missing trace_id": (node_with(trace_id=...), "trace_id:"),
    "missing product_id": (node_with(product_id=...), "product_id:"),
    "missing agent_id": (node_with(agent_id=...), "agent_id:"),
    "empty agent_id": (node_with(agent_id=""), "agent_id:"),
    "trace_id not a string": (node_with(trace_id=7), "trace_id:"),
    "product_id too long": (node_with(product_id="p" * 256), "product_id:"),
    "confidence a string": (node_with(confidence="0.9"), "confidence: must be a number"),
    "confidence a bool": (node_with(confidence=True), "confidence: must be a number"),
    "confidence a list": (node_with(confidence=[0.5]), "confidence: must be a number"),
    "confidence above 1": (node_with(confidence=1.01), "confidence:"),
    "confidence below 0": (node_with(confidence=-0.1), "confidence:"),
    "percentage above 100": (node_with(confidence=150, confidence_scale=100), "confidence:"),
    "confidence_scale zero": (node_with(confidence=0.5, confidence_scale=0), "confidence_scale:"),
    "confidence_scale a string": (node_with(confidence=50, confidence_scale="100"), "confidence_scale:"),
    "parent_ids a string": (node_with(parent_ids="p1"), "parent_ids:"),
    "parent_ids of numbers": (node_with(parent_ids=[1, 2]), "parent_ids:"),
    "parent_ids an object": (node_with(parent_ids={"p1": True}), "parent_ids:"),
    "parent id with NUL": (node_with(parent_ids=["p\x00"]), "parent_ids:"),
    "status unknown": (node_with(status="failed"), "status:"),
    "round zero": (node_with(round=0), "round:"),
    "round a string": (node_with(round="1"), "round:"),
    "round beyond a 32-bit integer": (node_with(round=2**31), "round:"),
    "metrics not an object": (node_with(metrics=[0.4]), "metrics:"),
    "metadata not an object": (node_with(metadata="x"), "metadata:"),
    "content not a string": (node_with(content={"text": "x"}), "content:"),
    "step too long": (node_with(step="s" * 256), "step:"),
    "inline fuse decision unknown": (node_with(fuse={"decision": "maybe"}), "fuse.decision:"),
    "inline fuse not an object": (node_with(fuse="block"), "fuse:"),
    "inline fuse threshold a string": (node_with(fuse={"decision": "block", "threshold": "0.5"}), "fuse.threshold:"),
    "timestamp not ISO 8601": (event_with(timestamp="yesterday"), "timestamp:"),
    "timestamp a number": (event_with(timestamp=1763629200), "timestamp:"),
    "timestamp missing": (event_with(timestamp=...), "timestamp:"),
    "type unknown": (event_with(type="edge"), "type:"),
    "type missing": (event_with(type=...), "type:"),
    "type a list": (event_with(type=["node"]), "type:"),
    "type an object": (event_with(type={"node": 1}), "type:"),
    "inline fuse decision a list": (node_with(fuse={"decision": ["block"]}), "fuse.decision:"),
    "fuse decision an object": (event_with(fuse_event("p1", event_id="ev-bad"),
                                           body={"trace_id": "t1", "product_id": "p1", "decision": {}}), "decision:"),
    "review verdict a list": (review_event("t1", ["correct"], event_id="ev-bad"), "verdict:"),
    "body not an object": (event_with(body=["trace_id", "t1"]), "body:"),
    "body missing": (event_with(body=...), "body:"),
    "id not a string": (event_with(id=42), "id:"),
    "id with NUL": (event_with(id="ev\x00bad"), "id:"),
    "fuse decision unknown": (fuse_event("p1", "maybe", event_id="ev-bad"), "decision:"),
    "fuse without product_id": (event_with(fuse_event("p1", event_id="ev-bad"), body={"trace_id": "t1", "decision": "block"}),
                                "product_id:"),
    "review verdict unknown": (review_event("t1", "meh", event_id="ev-bad"), "verdict:"),
    "review without trace_id": (event_with(review_event("t1", "correct", event_id="ev-bad"), body={"verdict": "correct"}),
                                "trace_id:"),
}


@pytest.mark.parametrize(("bad", "field"), BAD_EVENTS.values(), ids=BAD_EVENTS.keys())
def test_bad_event_is_refused_and_good_events_in_the_batch_are_stored(api, project, ingest, bad, field):
    good_before = node_event("good-1", confidence=0.9)
    good_after = node_event("good-2", parents=["good-1"], seconds=1)

    result = ingest(good_before, bad, good_after, fuse_event("good-1", "downweight"), review_event("t1", "correct"))

    [error] = result["errors"]
    assert error["status"] == 400
    assert error["message"].startswith(field), error["message"]
    assert error["id"] == (bad["id"] if isinstance(bad.get("id"), str) else None)
    assert sorted(s["id"] for s in result["successes"]) == ["ev-good-1", "ev-good-2", "fuse-good-1-downweight",
                                                             "review-t1-correct"]
    assert set(Node.objects.filter(project=project).values_list("product_id", flat=True)) == {"good-1", "good-2"}
    assert stored_rows(project) | {"traces": None} == {
        "traces": None, "nodes": 2, "edges": 1, "fuses": 1, "reviews": 1, "event_ids": 4,
    }


@pytest.mark.parametrize("bad", [1, "event", None, [node_event("p9")], True])
def test_event_that_is_not_an_object_is_refused_alone(project, ingest, bad):
    result = ingest(node_event("good"), bad)

    assert result["errors"] == [{"id": None, "status": 400, "message": "event: must be an object"}]
    assert statuses(result) == {"ev-good": 201, None: 400}
    assert stored_rows(project)["nodes"] == 1


def test_refused_event_id_is_not_taken_so_a_corrected_resend_is_stored(api, ingest):
    first = ingest(node_with(confidence="high"))
    assert error_for(first, "ev-bad")["message"] == "confidence: must be a number"

    second = ingest(node_with(confidence=0.7))

    assert statuses(second) == {"ev-bad": 201}
    assert api.get("/api/v1/traces/t1/nodes/bad").json()["confidence"] == 0.7


def test_every_bad_event_in_a_batch_gets_its_own_error(project, ingest):
    result = ingest(
        node_with(confidence="x"), node_event("ok"), event_with(node_event("b2", event_id="ev-b2"), type="edge"),
        review_event("t1", "meh", event_id="ev-b3"),
    )

    assert statuses(result) == {"ev-bad": 400, "ev-ok": 201, "ev-b2": 400, "ev-b3": 400}
    assert stored_rows(project)["nodes"] == 1


def test_a_batch_of_only_bad_events_stores_nothing(project, ingest):
    result = ingest(node_with(confidence=2), event_with(timestamp="soon"))

    assert result["successes"] == []
    assert len(result["errors"]) == 2
    assert set(stored_rows(project).values()) == {0}


@pytest.mark.parametrize(
    "timestamp",
    ["2026-11-20T09:00:00Z", "2026-11-20T09:00:00+02:00", "2026-11-20T09:00:00.123456Z", "2026-11-20T09:00:00"],
)
def test_iso_8601_timestamps_are_accepted(api, ingest, timestamp):
    result = ingest(event_with(timestamp=timestamp))

    assert statuses(result) == {"ev-bad": 201}


def test_timestamp_without_offset_is_read_as_utc(api, ingest):
    ingest(event_with(timestamp=BASE_TIME.replace(tzinfo=None).isoformat()))

    assert api.get("/api/v1/traces/t1/nodes/bad").json()["timestamp"] == "2026-11-20T09:00:00Z"


def test_explicit_nulls_for_optional_fields_mean_absent(api, ingest):
    result = ingest(node_with(confidence=None, confidence_scale=None, parent_ids=None, status=None, round=None,
                              metrics=None, metadata=None, fuse=None, content=None))

    assert statuses(result) == {"ev-bad": 201}
    node = api.get("/api/v1/traces/t1/nodes/bad").json()
    assert (node["confidence"], node["status"], node["parent_ids"], node["metadata"]) == (None, "ok", [], {})


def test_unknown_body_fields_are_ignored(ingest):
    assert statuses(ingest(node_with(colour="blue"))) == {"ev-bad": 201}
