"""What a run cost and what it bought: `cost_usd` over the nodes of its
results' traces, `cost_per_passed`, `p95_latency_ms` (nearest rank over the
results' latency_ms), and the comparison's trade-off table and deltas. Each
figure is recomputed here from the events and results sent."""

import math

import pytest

from tests.support.evals import number_items
from tests.support.events import node_event

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_smoke]


def nearest_rank(values, p):
    ordered = sorted(values)
    return ordered[math.ceil(p / 100 * len(ordered)) - 1]


def traced_case(trace_id, costs, fused=0):
    """Nodes of one evaluated case: one per cost (None: unpriced), the first `fused` of them blocked."""
    return [node_event(f"{trace_id}-{i}", trace_id, seconds=i, environment="evaluation",
                       **({"cost_usd": cost} if cost is not None else {}),
                       **({"fuse": {"decision": "block", "reason": "low"}} if i < fused else {}))
            for i, cost in enumerate(costs)]


def test_a_run_answers_its_cost_cost_per_passed_and_p95_latency(api, dataset, run, ingest):
    dataset(items=number_items(4))
    costs = {"t-1": [0.01, 0.02], "t-2": [0.005, None], "t-3": [0.04], "t-4": []}
    ingest(*[event for trace, values in costs.items() for event in traced_case(trace, values)])
    latencies = [120.0, 340.0, 95.5, 2000.0]
    results = [{"item_id": f"q-{i}", "actual": i * 10 if i != 3 else 0, "trace_id": f"t-{i}",
                "latency_ms": latencies[i - 1]} for i in range(1, 5)]
    # A second result naming an already named trace: its nodes count once.
    summary = run(results=results)

    cost = sum(c for values in costs.values() for c in values if c is not None)
    assert summary["passed"] == 3
    assert summary["cost_usd"] == pytest.approx(cost)
    assert summary["cost_per_passed"] == pytest.approx(cost / 3)
    assert summary["p95_latency_ms"] == nearest_rank(latencies, 95)


def test_a_trace_named_by_two_results_counts_once(api, dataset, run, ingest):
    dataset(items=number_items(2))
    ingest(*traced_case("shared", [0.5]))
    summary = run(results=[{"item_id": "q-1", "actual": 10, "trace_id": "shared"},
                           {"item_id": "q-2", "actual": 20, "trace_id": "shared"}])
    assert summary["cost_usd"] == 0.5 and summary["cost_per_passed"] == 0.25


def test_nothing_passed_nothing_priced_no_latency(api, dataset, run, ingest):
    dataset(items=number_items(2))
    ingest(*traced_case("t-1", [0.3]), *traced_case("t-2", [None]))
    failed = run(results=[{"item_id": "q-1", "actual": -1, "trace_id": "t-1"}])
    assert (failed["cost_usd"], failed["cost_per_passed"], failed["p95_latency_ms"]) == (0.3, None, None)
    unpriced = run(results=[{"item_id": "q-1", "actual": 10, "trace_id": "t-2"}])
    assert (unpriced["cost_usd"], unpriced["cost_per_passed"]) == (None, None)
    untraced = run(results=[{"item_id": "q-1", "actual": 10, "latency_ms": 5}])
    assert (untraced["cost_usd"], untraced["p95_latency_ms"]) == (None, 5)


def test_another_projects_trace_of_the_same_id_costs_nothing(api, other_api, dataset, run, ingest):
    dataset(items=number_items(1))
    ingest(*traced_case("t-1", [9.0]), client=other_api)
    assert run(results=[{"item_id": "q-1", "actual": 10, "trace_id": "t-1"}])["cost_usd"] is None


def test_the_comparison_shows_the_trade_off_and_its_deltas(api, dataset, run, ingest):
    dataset(items=number_items(4))
    # Before: cheap and sloppy. After: redundancy costs more, fuses catch the bad fragments, one escalation.
    ingest(*[e for i in range(1, 5) for e in traced_case(f"cheap-{i}", [0.01])],
           *[e for i in range(1, 5) for e in traced_case(f"careful-{i}", [0.01, 0.02, 0.03], fused=1 if i == 4 else 0)])
    before = run(results=[{"item_id": f"q-{i}", "actual": i * 10 if i <= 2 else 0, "trace_id": f"cheap-{i}",
                           "latency_ms": 100.0 * i} for i in range(1, 5)])
    after = run(results=[{"item_id": f"q-{i}", "actual": i * 10, "trace_id": f"careful-{i}",
                          "latency_ms": 300.0 * i, "escalated": i == 4} for i in range(1, 5)])

    compared = api.get(f"/api/v1/runs/{after['id']}/compare?to={before['id']}").json()
    here, there = compared["trade_off"]["here"], compared["trade_off"]["there"]
    assert (there["cost_usd"], here["cost_usd"]) == (pytest.approx(0.04), pytest.approx(0.24))
    assert there["cost_per_passed"] == pytest.approx(0.04 / 2) and here["cost_per_passed"] == pytest.approx(0.24 / 4)
    assert here["cost_per_trace"] == pytest.approx(0.24 / 4)
    assert (there["fuse_rate"], here["fuse_rate"]) == (0, pytest.approx(1 / 12))
    assert (there["escalated"], here["escalated"]) == (0, 1)
    assert (there["accuracy"], here["accuracy"]) == (0.5, 1.0)
    assert here["p95_latency_ms"] == nearest_rank([300.0, 600.0, 900.0, 1200.0], 95)
    assert compared["cost_usd_delta"] == pytest.approx(0.20)
    assert compared["cost_per_passed_delta"] == pytest.approx(0.06 - 0.02)
    assert compared["p95_latency_ms_delta"] == pytest.approx(1200.0 - 400.0)


def test_the_comparison_page_shows_the_trade_off_table(api, member, dataset, run, ingest):
    dataset(items=number_items(2))
    ingest(*traced_case("a-1", [0.01]), *traced_case("b-1", [0.05]))
    before = run(results=[{"item_id": "q-1", "actual": 0, "trace_id": "a-1", "latency_ms": 200}])
    after = run(results=[{"item_id": "q-1", "actual": 10, "trace_id": "b-1", "latency_ms": 1500}])
    page = member.get(f"/p/acme/runs/{after['id']}/compare/?to={before['id']}").content.decode()
    assert 'id="trade-off-table"' in page
    assert "$0.05" in page and "$0.01" in page and "1.50 s" in page and "200 ms" in page


def test_each_result_carries_its_cases_cost(api, dataset, run, ingest):
    dataset(items=number_items(3))
    ingest(*traced_case("t-1", [0.01, 0.02]), *traced_case("t-2", [None]))
    summary = run(results=[{"item_id": "q-1", "actual": 10, "trace_id": "t-1"},
                           {"item_id": "q-2", "actual": 20, "trace_id": "t-2"},
                           {"item_id": "q-3", "actual": 30}])
    costs = {r["item_id"]: r["cost_usd"] for r in summary["results"]}
    assert costs == {"q-1": pytest.approx(0.03), "q-2": None, "q-3": None}
