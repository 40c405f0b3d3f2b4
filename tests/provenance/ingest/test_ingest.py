"""Ingest: events are stored, resends are idempotent, product ids are unique per
project, confidences are normalized, fuse and review events land."""

import pytest

from tenancy.models import Project
from tests.provenance.stored import node_of, statuses, stored_rows
from tests.support.events import fuse_event, node_event, review_event


def trace_nodes(api, trace_id="t1") -> dict[str, dict]:
    response = api.get(f"/api/v1/traces/{trace_id}")
    assert response.status_code == 200, response.content
    return {n["product_id"]: n for n in response.json()["nodes"]}


def test_new_events_answer_201_each(ingest):
    result = ingest(node_event("p1"), fuse_event("p1"), review_event("t1", "incorrect"))

    assert result["errors"] == []
    assert sorted(result["successes"], key=lambda s: s["id"]) == [
        {"id": "ev-p1", "status": 201}, {"id": "fuse-p1-block", "status": 201}, {"id": "review-t1-incorrect", "status": 201},
    ]


def test_empty_batch_answers_207_with_nothing(api, project):
    response = api.post("/api/v1/ingest", {"batch": []}, format="json")

    assert response.status_code == 207
    assert response.json() == {"successes": [], "errors": []}
    assert set(stored_rows(project).values()) == {0}


def test_node_fields_are_stored_as_sent(api, ingest):
    ingest(
        node_event("in", seconds=0, source_type="user_input", content="question"),
        node_event(
            "frag", parents=["in"], seconds=1, agent_id="retrieval_agent_v2", step="retrieve",
            source_type="retrieval", content="fragment text", raw_input="query", confidence=0.45, round=2,
            status="error", metrics={"semantic_entropy": 1.2, "vote_ratio": 0.4}, metadata={"model": "m", "k": [1, 2]},
        ),
    )

    node = node_of(api, "t1", "frag")
    assert {k: node[k] for k in ("product_id", "trace_id", "agent_id", "step", "source_type", "confidence", "fused",
                                 "status", "round", "parent_ids", "timestamp")} == {
        "product_id": "frag", "trace_id": "t1", "agent_id": "retrieval_agent_v2", "step": "retrieve",
        "source_type": "retrieval", "confidence": 0.45, "fused": False, "status": "error", "round": 2,
        "parent_ids": ["in"], "timestamp": "2026-11-20T09:00:01Z",
    }
    assert node["content"] == "fragment text"
    assert node["raw_input"] == "query"
    assert node["metrics"] == {"semantic_entropy": 1.2, "vote_ratio": 0.4}
    assert node["metadata"] == {"model": "m", "k": [1, 2]}


def test_optional_fields_default_sensibly(api, ingest):
    ingest(node_event("p1"))

    node = node_of(api, "t1", "p1")
    assert (node["confidence"], node["status"], node["round"], node["fused"], node["step"]) == (None, "ok", None, False, "")
    assert node["parent_ids"] == []


def test_resend_is_idempotent(api, project, ingest):
    batch = [
        node_event("p1", confidence=0.9),
        node_event("p2", parents=["p1"], seconds=1, fuse={"decision": "block", "reason": "low"}),
        fuse_event("p1", "downweight"),
        review_event("t1", "incorrect"),
    ]
    first = ingest(*batch)
    before = stored_rows(project)
    trace_before = api.get("/api/v1/traces").json()["results"]

    again = ingest(*batch)

    assert set(statuses(first).values()) == {201}
    assert statuses(again) == {event["id"]: 200 for event in batch}
    assert again["errors"] == []
    assert stored_rows(project) == before
    assert api.get("/api/v1/traces").json()["results"] == trace_before


def test_resend_mixed_with_new_events_stores_only_the_new(project, ingest):
    ingest(node_event("p1"))
    before = stored_rows(project)

    result = ingest(node_event("p1"), node_event("p2", parents=["p1"]))

    assert statuses(result) == {"ev-p1": 200, "ev-p2": 201}
    assert stored_rows(project)["nodes"] == before["nodes"] + 1


def test_resend_with_changed_content_keeps_the_first_version(api, ingest):
    ingest(node_event("p1", content="first"))

    result = ingest(node_event("p1", content="second"))

    assert statuses(result) == {"ev-p1": 200}
    assert node_of(api, "t1", "p1")["content"] == "first"


def test_duplicate_event_id_within_one_batch_is_stored_once(api, project, ingest):
    result = ingest(node_event("p1", content="a"), node_event("p1", content="b"))

    assert [s["status"] for s in result["successes"]] == [201, 200]
    assert result["errors"] == []
    assert stored_rows(project)["nodes"] == 1
    assert node_of(api, "t1", "p1")["content"] == "a"


def test_product_id_reused_by_another_event_is_409_and_its_event_id_is_freed(api, project, ingest):
    ingest(node_event("p1", content="original"))
    before = stored_rows(project)

    result = ingest(node_event("p1", event_id="ev-other", content="impostor"), node_event("p2"))

    assert statuses(result) == {"ev-other": 409, "ev-p2": 201}
    assert "product_id" in result["errors"][0]["message"]
    assert node_of(api, "t1", "p1")["content"] == "original"
    assert stored_rows(project)["nodes"] == before["nodes"] + 1

    corrected = ingest(node_event("p1-fixed", event_id="ev-other", content="corrected"))

    assert statuses(corrected) == {"ev-other": 201}
    assert node_of(api, "t1", "p1-fixed")["content"] == "corrected"


def test_product_id_reused_within_one_batch_keeps_the_first(api, project, ingest):
    result = ingest(
        node_event("p1", event_id="ev-a", content="a", parents=["x"], fuse={"decision": "block"}),
        node_event("p1", event_id="ev-b", content="b", parents=["y"]),
    )

    assert statuses(result) == {"ev-a": 201, "ev-b": 409}
    node = node_of(api, "t1", "p1")
    assert (node["content"], node["parent_ids"]) == ("a", ["x"])
    assert len(node["fuses"]) == 1
    assert statuses(ingest(node_event("p2", event_id="ev-b"))) == {"ev-b": 201}


def test_refused_node_does_not_count_in_its_trace(api, ingest):
    ingest(node_event("p1", confidence=0.9))

    ingest(node_event("p1", event_id="ev-dup", confidence=0.1, status="error", seconds=3600))

    [trace] = api.get("/api/v1/traces").json()["results"]
    assert (trace["node_count"], trace["min_confidence"], trace["error_count"]) == (1, 0.9, 0)
    assert trace["started_at"] == trace["ended_at"]


def test_refused_node_in_a_new_trace_leaves_no_empty_trace(api, ingest):
    ingest(node_event("p1", "t1"))

    ingest(node_event("p1", "t2", event_id="ev-dup"))

    assert api.get("/api/v1/traces/t2").status_code == 404
    assert [t["trace_id"] for t in api.get("/api/v1/traces").json()["results"]] == ["t1"]


def test_refused_node_in_a_reviewed_new_trace_keeps_the_trace_for_the_review(api, ingest):
    ingest(node_event("p1", "t1"))

    result = ingest(node_event("p1", "t2", event_id="ev-dup"), review_event("t2", "incorrect"))

    assert statuses(result) == {"ev-dup": 409, "review-t2-incorrect": 201}
    assert api.get("/api/v1/traces/t2").json()["nodes"] == []
    assert [t["trace_id"] for t in api.get("/api/v1/traces?verdict=incorrect").json()["results"]] == ["t2"]


@pytest.mark.parametrize(
    ("confidence", "scale", "stored"),
    [(82, 100, 0.82), (0.82, 1, 0.82), (0.82, None, 0.82), (4, 5, 0.8), (0, 100, 0.0), (100, 100, 1.0), (1, 1, 1.0)],
)
def test_confidence_is_normalized_and_the_raw_value_kept(api, ingest, confidence, scale, stored):
    extra = {} if scale is None else {"confidence_scale": scale}
    ingest(node_event("p1", confidence=confidence, **extra))

    node = node_of(api, "t1", "p1")
    assert node["confidence"] == pytest.approx(stored)
    assert node["confidence_raw"] == confidence
    assert node["confidence_scale"] == (scale or 1)
    assert api.get("/api/v1/traces/t1").json()["nodes"][0]["confidence"] == pytest.approx(stored)


def test_low_percentage_confidence_is_high_uncertainty(api, ingest):
    ingest(node_event("p1", confidence=45, confidence_scale=100))

    assert api.get("/api/v1/traces?has_low_confidence=true").json()["count"] == 1


def test_inline_block_makes_the_node_fused(api, ingest):
    ingest(node_event("p1", confidence=0.3, fuse={"decision": "block", "reason": "below 0.5", "threshold": 0.5}))

    node = node_of(api, "t1", "p1")
    assert node["fused"] is True
    assert node["fuses"][0] | {"timestamp": None} == {
        "decision": "block", "reason": "below 0.5", "threshold": 0.5, "by_agent_id": "agent", "inline": True,
        "timestamp": None, "reason_code": None, "policy_version": None,
    }


def test_fuse_event_after_the_node_makes_it_fused(api, ingest):
    ingest(node_event("p1"))
    assert node_of(api, "t1", "p1")["fused"] is False

    ingest(fuse_event("p1", "block"))

    node = node_of(api, "t1", "p1")
    assert node["fused"] is True
    assert node["fuses"][0]["by_agent_id"] == "router"
    assert node["fuses"][0]["inline"] is False


def test_fuse_event_before_the_node_arrives_makes_it_fused(api, ingest):
    ingest(fuse_event("p1", "block"))

    ingest(node_event("p1"))

    assert node_of(api, "t1", "p1")["fused"] is True
    assert api.get("/api/v1/traces/t1").json()["nodes"][0]["fused"] is True


def test_fuse_event_and_node_in_one_batch_make_it_fused(api, ingest):
    ingest(fuse_event("p1", "block"), node_event("p1"))

    assert node_of(api, "t1", "p1")["fused"] is True


@pytest.mark.parametrize("decision", ["downweight", "accept"])
def test_downweight_and_accept_are_not_fused(api, ingest, decision):
    ingest(node_event("p1", fuse={"decision": decision, "reason": "r"}), node_event("p2"), fuse_event("p2", decision))

    for product_id in ("p1", "p2"):
        node = node_of(api, "t1", product_id)
        assert node["fused"] is False
        assert node["fuse_decision"] == decision


def test_the_most_severe_fuse_decision_wins_whatever_the_order(api, ingest):
    ingest(node_event("p1", fuse={"decision": "block"}), fuse_event("p1", "accept"))
    ingest(fuse_event("p2", "downweight"), node_event("p2"))
    ingest(fuse_event("p2", "accept"))

    assert node_of(api, "t1", "p1")["fuse_decision"] == "block"
    assert node_of(api, "t1", "p2")["fuse_decision"] == "downweight"


def test_reviews_are_stored_on_trace_and_node(api, ingest):
    ingest(node_event("final"))

    ingest(review_event("t1", "incorrect"), review_event("t1", "correct", "final", event_id="rv-node"))

    assert [r["verdict"] for r in node_of(api, "t1", "final")["reviews"]] == ["correct"]
    assert api.get("/api/v1/traces?verdict=incorrect").json()["count"] == 1


def test_review_of_a_trace_not_yet_seen_is_kept(api, ingest):
    ingest(review_event("later", "incorrect"))
    ingest(node_event("p1", "later"))

    assert [t["trace_id"] for t in api.get("/api/v1/traces?verdict=incorrect").json()["results"]] == ["later"]


def test_trace_counters_follow_the_nodes(api, ingest):
    ingest(node_event("a", confidence=0.9, seconds=5), node_event("b", confidence=0.3, status="error", seconds=1))
    ingest(node_event("c", confidence=0.7, seconds=9))

    [trace] = api.get("/api/v1/traces").json()["results"]
    assert trace["node_count"] == 3
    assert trace["min_confidence"] == 0.3
    assert trace["error_count"] == 1
    assert trace["started_at"].startswith("2026-11-20T09:00:01")
    assert trace["ended_at"].startswith("2026-11-20T09:00:09")


def test_a_parent_listed_twice_is_one_parent(api, ingest):
    ingest(node_event("a"), node_event("b", parents=["a", "a"]))

    assert node_of(api, "t1", "b")["parent_ids"] == ["a"]


def test_unknown_parents_are_kept_until_they_arrive(api, ingest):
    ingest(node_event("child", parents=["ghost", "parent"]))

    assert node_of(api, "t1", "child")["parent_ids"] == ["ghost", "parent"]


def test_nul_characters_are_replaced_not_fatal(api, ingest):
    result = ingest(
        node_event("p1", content="a\x00b", raw_input="\x00", step="s\x00", metadata={"k\x00": "v\x00"},
                   metrics={"m": "\x00"}),
        node_event("p2"),
        fuse_event("p1", "downweight", reason="r\x00"),
    )

    assert result["errors"] == []
    node = node_of(api, "t1", "p1")
    assert node["content"] == "a\ufffdb"
    assert node["raw_input"] == "\ufffd"
    assert node["metadata"] == {"k\ufffd": "v\ufffd"}
    assert node["fuses"][0]["reason"] == "r\ufffd"


UNICODE = "Größe ✓ 日本語 العربية 👩‍🔬 e\u0301 \u202e"


def test_unicode_round_trips(api, ingest):
    trace_id, product_id = "trace-日本", "frag-👩‍🔬"
    ingest(node_event(product_id, trace_id, content=UNICODE, agent_id="agent-ü", metadata={"note": UNICODE}))

    node = node_of(api, trace_id, product_id)
    assert (node["content"], node["agent_id"], node["metadata"]["note"]) == (UNICODE, "agent-ü", UNICODE)
    assert api.get(f"/api/v1/traces?q={trace_id}").json()["results"][0]["trace_id"] == trace_id


def test_ids_with_slashes_are_addressable(api, ingest):
    ingest(node_event("run/1/frag", "org/run-1"), node_event("run/1/final", "org/run-1", parents=["run/1/frag"]))

    assert [n["product_id"] for n in api.get("/api/v1/traces/org/run-1").json()["nodes"]] == ["run/1/frag", "run/1/final"]
    assert api.get("/api/v1/traces/org/run-1/nodes/run/1/frag/impact").json()["descendants"] == ["run/1/final"]


def test_ingest_only_touches_the_keys_project(project, make_project, ingest):
    other, _ = make_project("bystander")

    ingest(node_event("p1"))

    assert stored_rows(project)["nodes"] == 1
    assert set(stored_rows(other).values()) == {0}
    assert Project.objects.count() == 2
