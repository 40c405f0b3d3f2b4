"""Reading: a trace with its nodes, and the trace list with its pagination and
filters."""

import pytest

from tenancy.models import Project
from tests.support.events import fuse_event, node_event, review_event

CONTRACT_NODE_FIELDS = {"product_id", "agent_id", "step", "source_type", "confidence", "fused", "status", "round",
                        "parent_ids", "timestamp"}


def trace_ids(api, query: str = "") -> list[str]:
    response = api.get(f"/api/v1/traces{query}")
    assert response.status_code == 200, response.content
    return [t["trace_id"] for t in response.json()["results"]]


def test_trace_answers_its_nodes_in_the_contract_shape(api, ingest):
    ingest(
        node_event("q", seconds=0, source_type="user_input"),
        node_event("frag", parents=["q"], seconds=1, agent_id="retriever", step="retrieve", source_type="retrieval",
                   confidence=0.45, round=1, fuse={"decision": "block", "reason": "low"}),
        node_event("final", parents=["frag", "q"], seconds=2, source_type="final_answer", confidence=0.9,
                   status="error"),
    )

    body = api.get("/api/v1/traces/t1").json()

    assert body["trace_id"] == "t1"
    assert [n["product_id"] for n in body["nodes"]] == ["q", "frag", "final"]
    assert all(CONTRACT_NODE_FIELDS <= set(node) for node in body["nodes"])
    frag = body["nodes"][1]
    assert {k: frag[k] for k in CONTRACT_NODE_FIELDS} == {
        "product_id": "frag", "agent_id": "retriever", "step": "retrieve", "source_type": "retrieval",
        "confidence": 0.45, "fused": True, "status": "ok", "round": 1, "parent_ids": ["q"],
        "timestamp": "2026-11-20T09:00:01Z",
    }
    assert body["nodes"][2]["parent_ids"] == ["frag", "q"]
    assert body["nodes"][2]["status"] == "error"


def test_nodes_are_ordered_by_timestamp_not_arrival(api, ingest):
    ingest(node_event("late", seconds=9))
    ingest(node_event("early", seconds=1), node_event("middle", seconds=5))

    assert [n["product_id"] for n in api.get("/api/v1/traces/t1").json()["nodes"]] == ["early", "middle", "late"]


def test_unknown_trace_and_node_are_404(api, ingest):
    ingest(node_event("p1", "t1"), node_event("p2", "t2"))

    assert api.get("/api/v1/traces/nope").status_code == 404
    assert api.get("/api/v1/traces/t1/nodes/nope").status_code == 404
    assert api.get("/api/v1/traces/t1/nodes/nope/root-cause").status_code == 404
    assert api.get("/api/v1/traces/t1/nodes/nope/impact").status_code == 404
    # A node is addressed within its own trace.
    assert api.get("/api/v1/traces/t1/nodes/p2").status_code == 404
    assert api.get("/api/v1/traces/t1/nodes/p2/root-cause").status_code == 404


def test_trace_list_is_newest_first_with_figures(api, ingest):
    ingest(node_event("a1", "old", seconds=0, confidence=0.9), node_event("a2", "old", seconds=1, confidence=0.2))
    ingest(node_event("b1", "new", seconds=60, fuse={"decision": "block"}), node_event("b2", "new", seconds=61))

    [new, old] = api.get("/api/v1/traces").json()["results"]
    assert (new["trace_id"], old["trace_id"]) == ("new", "old")
    assert (old["node_count"], old["min_confidence"], old["fused_count"]) == (2, 0.2, 0)
    assert (new["node_count"], new["min_confidence"], new["fused_count"]) == (2, None, 1)


def test_trace_list_is_paginated(api, ingest):
    ingest(*[node_event(f"p{i}", f"t{i:02}", seconds=i) for i in range(7)])

    first = api.get("/api/v1/traces?page_size=3").json()
    second = api.get(first["next"]).json()
    last = api.get("/api/v1/traces?page_size=3&page=3").json()

    assert first["count"] == 7
    assert [t["trace_id"] for t in first["results"]] == ["t06", "t05", "t04"]
    assert [t["trace_id"] for t in second["results"]] == ["t03", "t02", "t01"]
    assert [t["trace_id"] for t in last["results"]] == ["t00"]
    assert last["next"] is None


@pytest.fixture
def varied_traces(ingest):
    """retrieval: fused, low confidence, reviewed incorrect; summary: clean, late;
    mixed: downweighted only, an error."""
    ingest(
        node_event("r1", "retrieval-run", agent_id="retriever", seconds=0, confidence=0.3),
        node_event("r2", "retrieval-run", agent_id="reasoner", parents=["r1"], seconds=10, confidence=0.8),
        fuse_event("r1", trace_id="retrieval-run"),
        review_event("retrieval-run", "incorrect"),
        node_event("s1", "summary-run", agent_id="summarizer", seconds=3600, confidence=0.95),
        review_event("summary-run", "correct"),
        node_event("m1", "mixed-run", agent_id="reasoner", seconds=1800, confidence=0.6, status="error",
                   fuse={"decision": "downweight"}),
    )


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", ["summary-run", "mixed-run", "retrieval-run"]),
        ("?agent_id=reasoner", ["mixed-run", "retrieval-run"]),
        ("?agent_id=retriever", ["retrieval-run"]),
        ("?agent_id=nobody", []),
        ("?has_fused=true", ["retrieval-run"]),
        ("?has_fused=false", ["summary-run", "mixed-run"]),
        ("?has_low_confidence=true", ["retrieval-run"]),
        ("?has_low_confidence=false", ["summary-run", "mixed-run"]),
        ("?verdict=incorrect", ["retrieval-run"]),
        ("?verdict=correct", ["summary-run"]),
        ("?since=2026-11-20T09:30:00Z", ["summary-run", "mixed-run"]),
        ("?until=2026-11-20T09:30:00Z", ["retrieval-run"]),
        ("?since=2026-11-20T09:00:05Z&until=2026-11-20T09:00:06Z", ["retrieval-run"]),
        ("?since=2026-11-20T09:00:05%2B00:00", ["summary-run", "mixed-run", "retrieval-run"]),
        ("?q=summary", ["summary-run"]),
        ("?q=RUN", ["summary-run", "mixed-run", "retrieval-run"]),
        ("?q=r2", ["retrieval-run"]),
        ("?agent_id=reasoner&has_fused=false", ["mixed-run"]),
        ("?has_low_confidence=true&verdict=correct", []),
    ],
)
def test_trace_list_filters(api, varied_traces, query, expected):
    assert trace_ids(api, query) == expected


def test_low_confidence_filter_follows_the_project_threshold(api, project, varied_traces):
    Project.objects.filter(pk=project.pk).update(high_uncertainty_threshold=0.7)

    assert trace_ids(api, "?has_low_confidence=true") == ["mixed-run", "retrieval-run"]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("?has_fused=maybe", "has_fused"),
        ("?has_low_confidence=2", "has_low_confidence"),
        ("?since=yesterday", "since"),
        ("?until=2026-13-01", "until"),
        ("?verdict=meh", "verdict"),
    ],
)
def test_bad_filter_value_is_400_naming_the_field(api, varied_traces, query, field):
    response = api.get(f"/api/v1/traces{query}")

    assert response.status_code == 400
    assert field in response.json()["fields"]

