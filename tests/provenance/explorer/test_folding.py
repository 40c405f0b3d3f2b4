"""A large trace's graph data opens folded: anomalies on their own, everything
else in clusters with count and worst confidence; clusters expand; focus keeps a
node's ancestors and consumers within N hops; the root-cause path folds too."""

import pytest

from demo.large_run import large_run_events
from tests.support.events import node_event


@pytest.fixture
def run(ingest):
    events = large_run_events("run", 1200)
    for start in range(0, len(events), 1000):
        ingest(*events[start:start + 1000])
    return events


def graph(member, query=""):
    response = member.get(f"/api/v1/traces/run/graph{query}")
    assert response.status_code == 200, response.content
    return response.json()


def test_a_large_trace_opens_folded_with_every_anomaly_drawn(member, run):
    g = graph(member)
    assert g["folded"] is True and g["total"] == 1200
    drawn = set(g["nodes"]["id"])
    low = {e["body"]["product_id"] for e in run if e["type"] == "node" and e["body"].get("confidence", 1) < 0.5}
    assert low and low <= drawn
    assert "final" in drawn
    assert len(drawn) + len(g["clusters"]["id"]) <= 120
    assert sum(g["clusters"]["count"]) + len(drawn) == 1200
    assert sorted(g["hidden"]["id"]) == sorted({e["body"]["product_id"] for e in run if e["type"] == "node"} - drawn)
    confidence = {e["body"]["product_id"]: e["body"].get("confidence") for e in run if e["type"] == "node"}
    for k, cluster in enumerate(g["hidden"]["cluster"]):
        assert confidence[g["hidden"]["id"][k]] >= g["clusters"]["worst"][cluster]
    # Every drawn edge joins two different columns or a node drawn on its own.
    assert len(g["edges"]) % 2 == 0
    assert g["summary"]["final_id"] == "final" and g["summary"]["node_count"] == 1200


def test_an_expanded_cluster_is_drawn_node_by_node(member, run):
    g = graph(member)
    biggest = max(range(len(g["clusters"]["id"])), key=lambda k: g["clusters"]["count"][k])
    key, count = g["clusters"]["id"][biggest], g["clusters"]["count"][biggest]
    opened = member.get("/api/v1/traces/run/graph", {"expand": key}).json()
    assert key not in opened["clusters"]["id"]
    assert len(opened["nodes"]["id"]) == len(g["nodes"]["id"]) + count
    assert opened["clusters"]["id"] == [c for c in g["clusters"]["id"] if c != key]


def test_an_opened_cluster_wraps_into_a_block_beside_its_band(member, run):
    g = graph(member)
    biggest = max(range(len(g["clusters"]["id"])), key=lambda k: g["clusters"]["count"][k])
    members = {pid for pid, c in zip(g["hidden"]["id"], g["hidden"]["cluster"]) if c == biggest}
    opened = member.get("/api/v1/traces/run/graph", {"expand": g["clusters"]["id"][biggest]}).json()
    nodes = opened["nodes"]
    block = [(x, y) for pid, x, y in zip(nodes["id"], nodes["x"], nodes["y"]) if pid in members]
    xs, ys = [x for x, _ in block], [y for _, y in block]
    heights = g["nodes"]["y"] + g["clusters"]["y"]
    # Rows within the folded graph's height, a few columns wide: the drawing
    # grows by the block's width, not by the chain's length.
    assert min(heights) <= min(ys) and max(ys) <= max(heights)
    assert max(xs) - min(xs) <= 8 and opened["columns"] <= g["columns"] + 8
    # Everything else keeps its height, and its column up to the block's shift.
    before = dict(zip(g["clusters"]["id"], zip(g["clusters"]["x"], g["clusters"]["y"])))
    shifts = set()
    for key, x, y in zip(opened["clusters"]["id"], opened["clusters"]["x"], opened["clusters"]["y"]):
        assert y == before[key][1]
        shifts.add(x - before[key][0])
    assert min(shifts) == 0 and len(shifts) == 2


def test_a_retry_in_a_folded_trace_links_the_nodes_it_names(member, run, ingest):
    ingest(node_event("retry-a", "run", parents=["question"], seconds=9000, confidence=0.2),
           node_event("retry-b", "run", parents=["question"], seconds=9001, confidence=0.3, retry_of="retry-a"))
    g = graph(member)
    assert g["folded"] is True
    ids = g["nodes"]["id"]
    assert [ids[k] for k in g["retries"]] == ["retry-a", "retry-b"]


def test_a_revealed_node_is_drawn_out_of_its_fold(member, run):
    g = graph(member)
    hidden = g["hidden"]["id"][0]
    shown = member.get("/api/v1/traces/run/graph", {"reveal": hidden}).json()
    assert hidden in shown["nodes"]["id"] and hidden not in shown["hidden"]["id"]


def test_focus_keeps_ancestors_and_consumers_within_the_hops(member, run):
    g = graph(member, "?focus=reason-5-10&hops=2")
    assert sorted(g["nodes"]["id"]) == sorted(f"reason-5-{j}" for j in (8, 9, 10, 11, 12))
    assert g["focus"] == {"product_id": "reason-5-10", "hops": 2, "count": 5}
    assert g["folded"] is False
    everything = graph(member, "?focus=final&hops=all")
    ids = set(everything["nodes"]["id"]) | set(everything["hidden"]["id"])
    assert "frag-c" in ids and "frag-4-5" not in ids  # a fused fragment nobody consumed


@pytest.mark.parametrize("query", ["?hops=0", "?hops=many", "?fold=yes", "?hops=-1"])
def test_malformed_view_parameters_are_a_clear_400(member, run, query):
    response = member.get(f"/api/v1/traces/run/graph{query}")
    assert response.status_code == 400
    assert response.json()["error"]


def test_the_root_cause_path_folds_its_ordinary_stretches(member, run):
    answer = member.get("/api/v1/traces/run/nodes/final/root-cause?view=explorer").json()
    assert [c["product_id"] for c in answer["root_causes"]] == ["frag-c"]
    steps = answer["path_steps"]
    assert steps[0] == {"product_id": "frag-c", "reason": "low_confidence"}
    assert steps[-1] == {"product_id": "final", "reason": None}
    assert any("skipped" in step for step in steps)
    skipped = sum(step.get("skipped", 0) for step in steps)
    named = sum(1 for step in steps if "product_id" in step)
    assert skipped + named == len(answer["path"])


def test_root_cause_and_impact_of_a_large_trace_cost_a_fixed_number_of_queries(member, run,
                                                                               django_assert_max_num_queries):
    # session, user, project, trace, node; the trace's edges and nodes (and its
    # consumers elsewhere, for impact); homes of the causes, block reasons.
    with django_assert_max_num_queries(10):
        answer = member.get("/api/v1/traces/run/nodes/final/root-cause?view=explorer").json()
    assert [c["product_id"] for c in answer["root_causes"]] == ["frag-c"]
    with django_assert_max_num_queries(10):
        impact = member.get("/api/v1/traces/run/nodes/question/impact?view=explorer").json()
    assert len(impact["descendants"]) == 1199
    with django_assert_max_num_queries(8):
        assert member.get("/api/v1/traces/run/graph").json()["total"] == 1200
