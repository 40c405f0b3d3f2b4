"""Overview names a trace that dominates the window and shows the
node-weighted figures without it, and trace-weighted figures beside them
(each trace counted once); Fuse rates puts rounds beyond 10 in one bar.
Every figure recomputed here from the raw rows."""

from datetime import timedelta

from metrics.rollups.refresh import refresh_rollups
from provenance.models import FuseDecision, Node
from tests.metrics.traffic import post_in_batches
from tests.support.events import BASE_TIME, node_event

WINDOW = {"start": BASE_TIME.isoformat(), "end": (BASE_TIME + timedelta(hours=6)).isoformat()}


def long_run_and_small_traces() -> list[dict]:
    events = [node_event(f"long-{i}", "long-run", seconds=i * 2, confidence=0.9, round=1 + i // 20)
              for i in range(300)]
    for t in range(40):
        for n in range(3):
            body = {"fuse": {"decision": "block", "reason": "low"}} if n == 0 else {}
            events.append(node_event(f"s{t}-{n}", f"small-{t}", seconds=60 * t + n, confidence=0.3, round=1, **body))
    return events


def test_a_dominant_trace_is_named_with_the_figures_without_it(api, ingest, project):
    post_in_batches(ingest, long_run_and_small_traces())
    refresh_rollups()
    ingest(node_event("late", "small-late", seconds=3000, confidence=0.5))
    body = api.get("/api/v1/metrics/overview", WINDOW).json()
    found = body["dominant_trace"]
    nodes = Node.objects.filter(project=project)
    assert (found["trace_id"], found["nodes"]) == ("long-run", nodes.filter(trace__trace_id="long-run").count())
    assert found["share"] == found["nodes"] / nodes.count()
    rest = nodes.exclude(trace__trace_id="long-run")
    fused = rest.filter(fuse_state=FuseDecision.BLOCK).count()
    confidences = list(rest.values_list("confidence", flat=True))
    assert found["without"]["node_count"] == rest.count() == 121
    assert found["without"]["trace_count"] == 41
    assert found["without"]["fuse_rate"] == fused / rest.count()
    assert abs(found["without"]["mean_confidence"] - sum(confidences) / len(confidences)) < 1e-12
    assert found["url"].endswith("/traces/long-run/")


def test_trace_weighted_figures_count_each_trace_once(api, ingest, project, member):
    events = long_run_and_small_traces()
    # Evaluation traffic in the same window counts nowhere on production's Overview.
    events += [node_event(f"e{n}", "eval-1", seconds=n, confidence=0.1, environment="evaluation",
                          fuse={"decision": "block", "reason": "eval"}) for n in range(5)]
    post_in_batches(ingest, events)
    refresh_rollups()
    ingest(node_event("late", "small-late", seconds=3000, confidence=0.5))
    body = api.get("/api/v1/metrics/overview", WINDOW).json()
    per_trace = {}
    for trace, state, confidence in Node.objects.filter(project=project, trace__environment="production").values_list(
            "trace__trace_id", "fuse_state", "confidence"):
        per_trace.setdefault(trace, []).append((state == FuseDecision.BLOCK, confidence))
    rates = [sum(fused for fused, _ in nodes) / len(nodes) for nodes in per_trace.values()]
    confidences = [sum(c for _, c in nodes) / len(nodes) for nodes in per_trace.values()]
    found = body["trace_weighted"]
    assert found["traces"] == len(per_trace) == 42
    assert found["traces_with_fuse_share"] == sum(rate > 0 for rate in rates) / len(rates) == 40 / 42
    assert abs(found["mean_trace_fuse_rate"] - sum(rates) / len(rates)) < 1e-12
    assert abs(found["mean_trace_confidence"] - sum(confidences) / len(confidences)) < 1e-12
    # Node-weighted, the long run sets the figure; per trace it counts once.
    assert body["headline"]["current"]["fuse_rate"] < 0.2 < found["mean_trace_fuse_rate"]
    assert 'id="trace-weighted"' in member.get("/metrics/acme/").content.decode()


def test_no_trace_is_called_out_when_none_dominates(api, ingest):
    ingest(*[node_event(f"n{t}", f"t{t}", seconds=t, confidence=0.5) for t in range(10)])
    assert api.get("/api/v1/metrics/overview", WINDOW).json()["dominant_trace"] is None


def test_rounds_beyond_ten_share_one_bar(api, ingest, project):
    post_in_batches(ingest, long_run_and_small_traces())
    rows = api.get("/api/v1/metrics/fuses", WINDOW).json()["by_round"]
    assert [row["value"] for row in rows] == [str(r) for r in range(1, 11)] + ["> 10"]
    beyond = Node.objects.filter(project=project, round__gt=10)
    assert rows[-1]["node_count"] == beyond.count() == 100
    assert rows[-1]["fused"] == beyond.filter(fuse_state=FuseDecision.BLOCK).count()


def test_a_trace_dominating_a_filtered_window_is_found_past_the_traces_that_only_look_large(api, ingest):
    # Thirty traces of 12 nodes with one "x" step each, then one whose 12 nodes are 10 "x" steps:
    # every trace has 12 nodes, so the node counts cannot tell them apart.
    events = [node_event(f"t{t}-{n}", f"t{t}", seconds=60 * t + n, step="x" if n == 0 else "y", confidence=0.5)
              for t in range(30) for n in range(12)]
    events += [node_event(f"big-{n}", "big", seconds=1900 + n, step="x" if n < 10 else "y", confidence=0.5)
               for n in range(12)]
    post_in_batches(ingest, events)
    found = api.get("/api/v1/metrics/overview", {**WINDOW, "step": "x"}).json()["dominant_trace"]
    assert (found["trace_id"], found["nodes"], found["share"]) == ("big", 10, 10 / 40)
    assert api.get("/api/v1/metrics/overview", WINDOW).json()["dominant_trace"] is None


def test_trace_weighted_figures_honour_every_filter(api, ingest, project):
    """Read from the hour traces (unfiltered, by agent) or the raw rows (the
    other filters), over rolled hours and newer nodes: the figures of the
    traces' matching nodes, as the ORM groups them."""
    events = []
    for t in range(30):
        for n in range(4):
            body = {"fuse": {"decision": "block", "reason": "low"}} if (t + n) % 7 == 0 else {}
            events.append(node_event(
                f"f{t}-{n}", f"trace-{t}", seconds=900 * t + 400 * n, confidence=None if (t * n) % 5 == 4 else n / 5,
                agent_id=("retriever", "reasoner")[n % 2], step=("search", "answer")[t % 2], round=1 + n % 2,
                source_type=("retrieval", "reasoning")[(t + n) % 2], model=("m-a", "m-b")[t % 2],
                environment="evaluation" if t % 10 == 9 else "production", **body))
    post_in_batches(ingest, events)
    refresh_rollups()
    ingest(node_event("late", "trace-3", seconds=3000, confidence=0.2, agent_id="retriever", step="search"))
    window = (BASE_TIME + timedelta(minutes=20), BASE_TIME + timedelta(hours=7))
    for query in ({}, {"agent_id": "retriever"}, {"step": "search"}, {"source_type": "reasoning"}, {"round": 2},
                  {"model": "m-a"}, {"environment": "evaluation"}, {"agent_id": "reasoner", "step": "answer"}):
        found = api.get("/api/v1/metrics/overview", {"start": window[0].isoformat(), "end": window[1].isoformat(),
                                                     **query}).json()["trace_weighted"]
        nodes = Node.objects.filter(project=project, timestamp__gte=window[0], timestamp__lt=window[1],
                                    trace__environment=query.get("environment", "production"),
                                    **{key: value for key, value in query.items() if key != "environment"})
        per_trace = {}
        for trace, state, confidence in nodes.values_list("trace_id", "fuse_state", "confidence"):
            per_trace.setdefault(trace, []).append((state == FuseDecision.BLOCK, confidence))
        rates = [sum(fused for fused, _ in rows) / len(rows) for rows in per_trace.values()]
        means = [sum(c for _, c in rows if c is not None) / sum(c is not None for _, c in rows)
                 for rows in per_trace.values() if any(c is not None for _, c in rows)]
        assert found["traces"] == len(per_trace) > 0, query
        assert found["traces_with_fuse_share"] == sum(rate > 0 for rate in rates) / len(rates), query
        assert abs(found["mean_trace_fuse_rate"] - sum(rates) / len(rates)) < 1e-12, query
        assert abs(found["mean_trace_confidence"] - sum(means) / len(means)) < 1e-12, query
