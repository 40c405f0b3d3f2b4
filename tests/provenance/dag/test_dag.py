"""DAG walks: root cause (the first anomalous ancestors and the path to the
node) and impact (every descendant), across traces, late parents and cycles."""

import pytest

from tenancy.models import Project
from tests.provenance.stored import impact, root_cause
from tests.support.events import fuse_event, node_event


def causes(answer: dict) -> list[tuple[str, str]]:
    return [(c["product_id"], c["reason"]) for c in answer["root_causes"]]


def test_contract_example_fused_fragment_is_the_root_cause(api, ingest):
    ingest(
        node_event("question", seconds=0, confidence=0.95),
        node_event("frag3", parents=["question"], seconds=1, confidence=0.45),
        node_event("concl2", parents=["frag3"], seconds=2, confidence=0.3),
        node_event("final", parents=["concl2"], seconds=3, confidence=0.2),
        fuse_event("frag3"),
    )

    assert root_cause(api, "final") == {
        "product_id": "final",
        "root_causes": [{"product_id": "frag3", "reason": "fused", "confidence": 0.45, "trace_id": "t1"}],
        "path": ["frag3", "concl2", "final"],
    }


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"confidence": 0.1, "status": "error", "fuse": {"decision": "block"}}, "fused"),
        ({"confidence": 0.9, "fuse": {"decision": "block"}}, "fused"),
        ({"confidence": 0.1, "status": "error"}, "error"),
        ({"status": "error"}, "error"),
        ({"confidence": 0.1}, "low_confidence"),
        ({"confidence": 0.1, "fuse": {"decision": "downweight"}}, "low_confidence"),
    ],
)
def test_reason_is_the_first_of_fused_error_low_confidence(api, ingest, fields, reason):
    ingest(node_event("bad", seconds=0, **fields), node_event("final", parents=["bad"], seconds=1, confidence=0.9))

    assert causes(root_cause(api, "final")) == [("bad", reason)]


@pytest.mark.parametrize(
    "fields",
    [{"confidence": 0.5}, {"confidence": 0.99}, {}, {"fuse": {"decision": "downweight"}, "confidence": 0.8},
     {"fuse": {"decision": "accept"}, "confidence": 0.6}, {"status": "ok", "confidence": 50, "confidence_scale": 100}],
)
def test_not_anomalous_nodes_are_no_root_cause(api, ingest, fields):
    ingest(node_event("ok", seconds=0, **fields), node_event("final", parents=["ok"], seconds=1, confidence=0.9))

    assert root_cause(api, "final") == {"product_id": "final", "root_causes": [], "path": []}


def test_anomalous_node_downstream_of_another_is_not_a_root_cause(api, ingest):
    ingest(
        node_event("low", seconds=0, confidence=0.2),
        node_event("mid", parents=["low"], seconds=1, confidence=0.9),
        node_event("err", parents=["mid"], seconds=2, status="error"),
        node_event("final", parents=["err"], seconds=3, fuse={"decision": "block"}),
    )

    answer = root_cause(api, "final")
    assert causes(answer) == [("low", "low_confidence")]
    assert answer["path"] == ["low", "mid", "err", "final"]


def test_several_independent_root_causes_are_all_listed_oldest_first(api, ingest):
    ingest(
        node_event("q", seconds=0, confidence=0.9),
        node_event("frag-b", parents=["q"], seconds=2, status="error"),
        node_event("frag-a", parents=["q"], seconds=1, confidence=0.3),
        node_event("ok", parents=["q"], seconds=1, confidence=0.8),
        node_event("concl", parents=["frag-b", "ok"], seconds=3, confidence=0.8),
        node_event("final", parents=["concl", "frag-a"], seconds=4, confidence=0.8),
    )

    answer = root_cause(api, "final")
    assert causes(answer) == [("frag-a", "low_confidence"), ("frag-b", "error")]
    assert answer["path"] == ["frag-a", "final"]


def test_the_node_itself_is_the_root_cause_when_nothing_upstream_is_anomalous(api, ingest):
    ingest(node_event("q", confidence=0.9), node_event("final", parents=["q"], seconds=1, confidence=0.1))

    answer = root_cause(api, "final")
    assert answer["root_causes"] == [{"product_id": "final", "reason": "low_confidence", "confidence": 0.1,
                                      "trace_id": "t1"}]
    assert answer["path"] == ["final"]


def test_no_anomaly_anywhere_gives_an_empty_list(api, ingest):
    ingest(node_event("a", confidence=0.9), node_event("b", parents=["a"], seconds=1))

    assert root_cause(api, "b") == {"product_id": "b", "root_causes": [], "path": []}
    assert root_cause(api, "a") == {"product_id": "a", "root_causes": [], "path": []}


def test_downstream_anomalies_are_not_root_causes_of_an_upstream_node(api, ingest):
    ingest(node_event("a", confidence=0.9), node_event("b", parents=["a"], seconds=1, status="error"))

    assert root_cause(api, "a")["root_causes"] == []


def test_the_project_threshold_changes_the_answer(api, project, ingest):
    ingest(
        node_event("frag", seconds=0, confidence=0.4),
        node_event("concl", parents=["frag"], seconds=1, confidence=0.6),
        node_event("final", parents=["concl"], seconds=2, confidence=0.9),
    )
    assert causes(root_cause(api, "final")) == [("frag", "low_confidence")]

    Project.objects.filter(pk=project.pk).update(high_uncertainty_threshold=0.3)
    assert causes(root_cause(api, "final")) == []

    Project.objects.filter(pk=project.pk).update(high_uncertainty_threshold=0.65)
    assert causes(root_cause(api, "final")) == [("frag", "low_confidence")]
    assert causes(root_cause(api, "concl")) == [("frag", "low_confidence")]


def test_late_arriving_parent_is_found_by_both_walks(api, ingest):
    ingest(node_event("final", parents=["concl"], seconds=2, confidence=0.9))
    assert root_cause(api, "final")["root_causes"] == []

    ingest(node_event("concl", parents=["frag"], seconds=1, confidence=0.8))
    ingest(node_event("frag", seconds=0, confidence=0.2))

    answer = root_cause(api, "final")
    assert causes(answer) == [("frag", "low_confidence")]
    assert answer["path"] == ["frag", "concl", "final"]
    assert impact(api, "frag") == ["concl", "final"]


def test_walks_cross_traces(api, ingest):
    ingest(node_event("kb-fact", "knowledge-run", seconds=0, confidence=0.9), fuse_event("kb-fact", trace_id="knowledge-run"))
    ingest(
        node_event("reuse", "answer-run", parents=["kb-fact"], seconds=10, confidence=0.9),
        node_event("final", "answer-run", parents=["reuse"], seconds=11, confidence=0.9),
    )
    ingest(node_event("other-final", "third-run", parents=["kb-fact"], seconds=20))

    answer = root_cause(api, "final", "answer-run")
    assert answer["root_causes"] == [{"product_id": "kb-fact", "reason": "fused", "confidence": 0.9,
                                      "trace_id": "knowledge-run"}]
    assert answer["path"] == ["kb-fact", "reuse", "final"]
    assert impact(api, "kb-fact", "knowledge-run") == ["reuse", "final", "other-final"]
    response = api.get("/api/v1/traces/knowledge-run/nodes/kb-fact/impact").json()
    assert {n["product_id"]: n["trace_id"] for n in response["nodes"]} == {
        "reuse": "answer-run", "final": "answer-run", "other-final": "third-run",
    }


def test_a_parent_that_never_arrives_does_not_break_the_walks(api, ingest):
    ingest(node_event("final", parents=["ghost", "frag"], seconds=1), node_event("frag", status="error"))

    assert causes(root_cause(api, "final")) == [("frag", "error")]
    assert impact(api, "frag") == ["final"]


def test_impact_lists_every_descendant_once(api, ingest):
    ingest(
        node_event("src", seconds=0),
        node_event("left", parents=["src"], seconds=1),
        node_event("right", parents=["src"], seconds=2),
        node_event("join", parents=["left", "right"], seconds=3),
        node_event("final", parents=["join", "src"], seconds=4),
        node_event("unrelated", seconds=5),
        node_event("upstream-of-src", seconds=-1),
    )

    assert impact(api, "src") == ["left", "right", "join", "final"]
    assert impact(api, "right") == ["join", "final"]
    assert impact(api, "final") == []


CYCLES = {
    "self-loop": [("a", ["a"])],
    "two-node cycle": [("a", ["b"]), ("b", ["a"])],
    "long cycle": [("a", ["d"]), ("b", ["a"]), ("c", ["b"]), ("d", ["c"])],
}


@pytest.mark.parametrize("cycle", CYCLES.values(), ids=CYCLES.keys())
def test_cycles_do_not_break_the_walks(api, ingest, cycle):
    ingest(
        *[node_event(pid, parents=parents, seconds=i, confidence=0.9) for i, (pid, parents) in enumerate(cycle)],
        node_event("final", parents=[cycle[-1][0]], seconds=10, confidence=0.9),
    )

    members = [pid for pid, _ in cycle]
    assert api.get("/api/v1/traces/t1").status_code == 200
    assert root_cause(api, "final")["root_causes"] == []
    # A node on a cycle is not listed among its own descendants.
    assert set(impact(api, "a")) == set(members) - {"a"} | {"final"}
    for pid in members:
        assert root_cause(api, pid)["root_causes"] == []


@pytest.mark.parametrize("cycle", CYCLES.values(), ids=CYCLES.keys())
def test_an_anomalous_node_on_a_cycle_is_a_root_cause(api, ingest, cycle):
    ingest(
        *[node_event(pid, parents=parents, seconds=i, confidence=0.2 if pid == "a" else 0.9)
          for i, (pid, parents) in enumerate(cycle)],
        node_event("final", parents=[cycle[-1][0]], seconds=10, confidence=0.9),
    )

    answer = root_cause(api, "final")
    assert causes(answer) == [("a", "low_confidence")]
    assert answer["path"][0] == "a"
    assert answer["path"][-1] == "final"


def test_an_anomaly_upstream_of_a_cycle_is_the_root_cause(api, ingest):
    ingest(
        node_event("src", seconds=0, status="error"),
        node_event("x", parents=["src", "y"], seconds=1, confidence=0.1),
        node_event("y", parents=["x"], seconds=2, confidence=0.1),
        node_event("final", parents=["y"], seconds=3),
    )

    answer = root_cause(api, "final")
    assert causes(answer) == [("src", "error")]
    assert answer["path"] == ["src", "x", "y", "final"]


def test_root_cause_and_impact_on_a_5000_node_trace_complete(api, ingest):
    """A deep, wide trace: node i consumed i-1 and i//2, so the chain is 5,000 deep."""
    total = 5000
    events = [
        node_event(f"n{i}", "big", parents=[f"n{j}" for j in {i - 1, i // 2} if 0 <= j < i], seconds=i,
                   confidence=0.2 if i == 7 else 0.9)
        for i in range(total)
    ]
    for start in range(0, total, 1000):
        assert ingest(*events[start : start + 1000])["errors"] == []

    answer = root_cause(api, f"n{total - 1}", "big")
    assert causes(answer) == [("n7", "low_confidence")]
    assert answer["path"][0] == "n7"
    assert answer["path"][-1] == f"n{total - 1}"
    assert len(impact(api, "n7", "big")) == total - 8
    assert len(api.get("/api/v1/traces/big").json()["nodes"]) == total
