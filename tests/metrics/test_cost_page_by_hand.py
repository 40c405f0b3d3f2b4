"""The Cost & latency page's figures recomputed by hand, on the embedded
default (SQLite: its reads answered one by one, metrics.counts.together, and
the legend's pooled groups ranked on their own) as on PostgreSQL (one
statement, the pooled groups chosen in it): totals, the legend's "others"
(four agents of twelve, ties at the cut by name) and a model never priced."""

from collections import Counter
from datetime import timedelta

import pytest

from metrics.dashboards import cost
from metrics.params import ChartParams
from tests.support.events import BASE_TIME, node_event

pytestmark = pytest.mark.sqlite_smoke


def test_the_cost_page_is_the_raw_rows_on_either_database(api, ingest, project):
    # Twelve agents (a legend of eight pools four), the eighth and ninth of the
    # same volume (agent_03 and agent_04: the name breaks the tie); odd ones priced.
    sizes = [k + 1 for k in range(12)]
    sizes[4] = 6
    nodes = [(k, i) for k in range(12) for i in range(sizes[k])]
    ingest(*[node_event(f"n{k}-{i}", f"t{k}-{i}", seconds=60 * k + i, agent_id=f"agent_{k:02}",
                        duration_ms=10.0 * k + i, model="gpt-4o" if k % 2 else "never-priced",
                        usage={"input_tokens": 10, "output_tokens": 1}, **({"cost_usd": 0.001} if k % 2 else {}))
             for k, i in nodes])
    start, end = BASE_TIME - timedelta(hours=1), BASE_TIME + timedelta(hours=6)
    response = api.get("/api/v1/metrics/cost", {"start": start.isoformat(), "end": end.isoformat()})
    assert response.status_code == 200
    page = cost.build(project, ChartParams(start, end, step="hour", by="agent_id"))
    assert page["totals"]["nodes_timed"] == len(nodes) == response.json()["totals"]["nodes_timed"]
    assert page["totals"]["tokens"] == 11 * len(nodes)
    assert page["totals"]["cost_usd"] == pytest.approx(0.001 * sum(sizes[k] for k in range(12) if k % 2))
    # Volume: a duration, tokens and (priced) a cost per node; the four least pooled.
    volume = {f"agent_{k:02}": sizes[k] * (3 if k % 2 else 2) for k in range(12)}
    pooled = sorted(volume, key=lambda a: (-volume[a], a))[8:]
    assert volume["agent_03"] == volume["agent_04"] and "agent_04" in pooled and "agent_03" not in pooled
    assert page["others"]["groups"] == sorted(pooled)
    durations = sorted(10.0 * k + i for k, i in nodes if f"agent_{k:02}" in pooled)
    shown = [p for p in page["others"]["p95_latency_ms"] if p is not None]
    assert len(shown) == 1 and abs(shown[0] - durations[-(-95 * len(durations) // 100) - 1]) <= 0.01 * durations[-1]
    assert page["unpriced_models"] == [{"model": "never-priced", "nodes": Counter(k % 2 for k, _ in nodes)[0]}]
