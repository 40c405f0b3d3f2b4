"""The fuse loop's provenance: retries (`retry_of`, `attempt`), the policy that
made a fuse decision (`reason_code`, `policy_version`), and escalations that stay
open until a review of their node or trace arrives."""

import pytest

from provenance.models import Escalation, Fuse, Node
from tests.provenance.ingest.test_ingest_queries import client_for
from tests.provenance.stored import error_for, node_of, statuses
from tests.support.events import BASE_TIME, fuse_event, node_event, review_event


def escalation_event(product_id: str, trace_id: str = "t1", *, event_id=None, **body):
    return {
        "id": event_id or f"esc-{product_id}",
        "type": "escalation",
        "timestamp": BASE_TIME.isoformat(),
        "body": {"trace_id": trace_id, "product_id": product_id, "reason": body.pop("reason", "fused 3 times"),
                 **body},
    }


def trace_node(api, product_id: str, trace_id: str = "t1") -> dict:
    response = api.get(f"/api/v1/traces/{trace_id}")
    assert response.status_code == 200, response.content
    return {n["product_id"]: n for n in response.json()["nodes"]}[product_id]


def test_a_retry_records_what_it_replaces_and_its_attempt(api, ingest):
    result = ingest(
        node_event("frag", confidence=0.3, fuse={"decision": "block", "reason": "low", "reason_code": "below_block"}),
        node_event("frag-r1", seconds=1, confidence=0.9, retry_of="frag", attempt=2),
    )

    assert result["errors"] == []
    assert {k: trace_node(api, "frag-r1")[k] for k in ("retry_of", "attempt")} == {"retry_of": "frag", "attempt": 2}
    assert {k: trace_node(api, "frag")[k] for k in ("retry_of", "attempt")} == {"retry_of": None, "attempt": None}
    assert {k: node_of(api, "t1", "frag-r1")[k] for k in ("retry_of", "attempt")} == {"retry_of": "frag", "attempt": 2}


def test_a_retry_of_a_node_not_yet_arrived_is_kept(api, ingest):
    ingest(node_event("late-r1", retry_of="late", attempt=1))
    ingest(node_event("late", seconds=-1))

    assert trace_node(api, "late-r1")["retry_of"] == "late"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"retry_of": 7}, "retry_of: must be a non-empty string"),
        ({"retry_of": ""}, "retry_of: must be a non-empty string"),
        ({"retry_of": "x" * 256}, "retry_of: longer than 255 characters"),
        ({"retry_of": "p1"}, "retry_of: must name another node than product_id"),
        ({"attempt": 0}, "attempt: must be an integer from 1 to 2147483647"),
        ({"attempt": 1.5}, "attempt: must be an integer from 1 to 2147483647"),
        ({"attempt": True}, "attempt: must be an integer from 1 to 2147483647"),
        ({"attempt": "2"}, "attempt: must be an integer from 1 to 2147483647"),
        ({"attempt": 2**31}, "attempt: must be an integer from 1 to 2147483647"),
    ],
)
def test_bad_retry_fields_are_refused_per_event(ingest, body, message):
    result = ingest(node_event("p1", **body), node_event("ok"))

    assert error_for(result, "ev-p1") == {"id": "ev-p1", "status": 400, "message": message}
    assert statuses(result)["ev-ok"] == 201


def test_fuse_decisions_carry_reason_code_and_policy_version(api, ingest):
    ingest(
        node_event("p1", confidence=0.3,
                   fuse={"decision": "block", "reason": "0.30 < 0.50", "reason_code": "below_block",
                         "policy_version": 3, "threshold": 0.5}),
        fuse_event("p1", "downweight", reason="votes split 2:1", reason_code="vote_split", policy_version=0),
    )

    fuses = node_of(api, "t1", "p1")["fuses"]
    assert [(f["decision"], f["reason_code"], f["policy_version"], f["inline"]) for f in fuses] == [
        ("block", "below_block", 3, True), ("downweight", "vote_split", 0, False),
    ]


def test_fuses_without_a_code_read_as_null(api, ingest):
    ingest(node_event("p1", fuse={"decision": "block", "reason": "low"}))

    [fuse] = node_of(api, "t1", "p1")["fuses"]
    assert (fuse["reason_code"], fuse["policy_version"]) == (None, None)


@pytest.mark.parametrize(
    ("fuse", "message"),
    [
        ({"reason_code": 5}, "reason_code: must be a short code (1 to 64 printable characters), e.g. 'below_block'"),
        ({"reason_code": ""}, "reason_code: must be a short code (1 to 64 printable characters), e.g. 'below_block'"),
        ({"reason_code": "c" * 65}, "reason_code: must be a short code (1 to 64 printable characters), e.g. 'below_block'"),
        ({"reason_code": "a\x00b"}, "reason_code: must be a short code (1 to 64 printable characters), e.g. 'below_block'"),
        ({"policy_version": -1}, "policy_version: must be an integer from 0 to 2147483647"),
        ({"policy_version": "3"}, "policy_version: must be an integer from 0 to 2147483647"),
        ({"policy_version": 2.0}, "policy_version: must be an integer from 0 to 2147483647"),
    ],
)
def test_bad_policy_fields_are_refused_per_event(ingest, fuse, message):
    result = ingest(
        node_event("p1", fuse={"decision": "block", "reason": "r", **fuse}),
        fuse_event("p2", event_id="f2", **fuse),
        node_event("ok"),
    )

    assert error_for(result, "ev-p1")["message"] == "fuse." + message
    assert error_for(result, "f2")["message"] == message
    assert statuses(result)["ev-ok"] == 201


def test_an_escalation_is_open_until_a_review_of_its_node_arrives(api, project, ingest):
    ingest(node_event("ans", confidence=0.2), escalation_event("ans", by_agent_id="router"))

    [escalation] = Escalation.objects.filter(project=project)
    assert (escalation.product_id, escalation.reason, escalation.by_agent_id, escalation.trace.trace_id) == (
        "ans", "fused 3 times", "router", "t1")
    assert escalation.closed_at is None
    assert node_of(api, "t1", "ans")["escalations"][0]["open"] is True

    ingest(review_event("t1", "incorrect", product_id="other-node"))
    assert Escalation.objects.get().closed_at is None

    ingest(review_event("t1", "correct", product_id="ans"))

    escalation = Escalation.objects.get()
    assert escalation.closed_at is not None
    assert escalation.closed_by_review.verdict == "correct"
    assert node_of(api, "t1", "ans")["escalations"][0]["open"] is False


def test_a_review_of_the_trace_closes_every_escalation_in_it(project, ingest):
    ingest(escalation_event("a"), escalation_event("b"), escalation_event("c", trace_id="t2"))

    ingest(review_event("t1", "incorrect"))

    assert {e.product_id: e.is_open for e in Escalation.objects.all()} == {"a": False, "b": False, "c": True}


def test_a_review_in_the_same_batch_closes_the_escalation(project, ingest):
    ingest(escalation_event("a"), review_event("t1", "correct", product_id="a"))

    assert Escalation.objects.get().closed_by_review is not None


def test_an_escalation_before_its_node_creates_the_trace(api, ingest):
    ingest(escalation_event("ghost", trace_id="t-new"))

    assert api.get("/api/v1/traces/t-new").status_code == 200


def test_escalations_are_idempotent(project, ingest):
    first = ingest(escalation_event("a"))
    again = ingest(escalation_event("a"))

    assert statuses(first) == {"esc-a": 201}
    assert statuses(again) == {"esc-a": 200}
    assert Escalation.objects.count() == 1


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"trace_id": None}, "trace_id: is required"),
        ({"product_id": None}, "product_id: is required"),
        ({"reason": None}, "reason: is required"),
        ({"reason": 3}, "reason: must be a string"),
        ({"by_agent_id": ["x"]}, "by_agent_id: must be a string"),
    ],
)
def test_bad_escalations_are_refused_per_event(ingest, body, message):
    event = escalation_event("a")
    event["body"].update(body)
    event["body"] = {k: v for k, v in event["body"].items() if v is not None}

    result = ingest(event, escalation_event("b"))

    assert error_for(result, "esc-a") == {"id": "esc-a", "status": 400, "message": message}
    assert statuses(result)["esc-b"] == 201


def test_an_unknown_event_type_names_the_four_types(ingest):
    result = ingest({"id": "e", "type": "alarm", "timestamp": BASE_TIME.isoformat(), "body": {}})

    assert error_for(result, "e")["message"] == "type: must be one of node, fuse, review, escalation"


def test_another_projects_escalations_stay_its_own(project, ingest, other_api):
    ingest(escalation_event("a"))
    response = other_api.post("/api/v1/ingest", {"batch": [review_event("t1", "correct")]}, format="json")

    assert response.status_code == 207
    assert Escalation.objects.get(project=project).closed_at is None


def test_the_fuse_loop_fields_survive_the_conflict_path(make_project):
    """A batch with a resent event takes the conflict-safe path on PostgreSQL;
    large batches stage through COPY there: both must keep every new field."""
    project, client = client_for(make_project)
    client.post("/api/v1/ingest", {"batch": [node_event("seed")]}, format="json")
    batch = [node_event("seed")] + [
        node_event(f"n{i}", seconds=i, retry_of=f"n{i - 1}" if i else "", attempt=i + 1,
                   fuse={"decision": "block", "reason": "r", "reason_code": "below_block", "policy_version": i})
        for i in range(300)
    ] + [escalation_event(f"n{i}", event_id=f"esc{i}") for i in range(300)]
    batch[1]["body"].pop("retry_of")

    response = client.post("/api/v1/ingest", {"batch": batch}, format="json")

    assert response.status_code == 207 and response.json()["errors"] == []
    assert Node.objects.get(project=project, product_id="n299").retry_of == "n298"
    assert Node.objects.get(project=project, product_id="n299").attempt == 300
    assert Fuse.objects.get(project=project, product_id="n7").reason_code == "below_block"
    assert Fuse.objects.get(project=project, product_id="n7").policy_version == 7
    assert Escalation.objects.filter(project=project).count() == 300


def test_the_fuse_loop_fields_survive_the_copy_path(make_project):
    project, client = client_for(make_project)
    batch = [
        node_event(f"n{i}", seconds=i, retry_of=f"n{i - 1}", attempt=i,
                   fuse={"decision": "block", "reason": "r", "reason_code": "tool_error", "policy_version": 2})
        for i in range(1, 301)
    ]

    response = client.post("/api/v1/ingest", {"batch": batch}, format="json")

    assert response.status_code == 207 and response.json()["errors"] == []
    assert Node.objects.get(project=project, product_id="n300").retry_of == "n299"
    assert Fuse.objects.filter(project=project, reason_code="tool_error", policy_version=2).count() == 300
