"""What a run cost and what it bought: the trade-off figures of an evaluation
run, over the nodes of its results' traces (each trace counted once, however
many results name it).

- cost_usd: the sum of those nodes' `cost_usd` (None: none has one);
- cost_per_passed: cost_usd ÷ passed results (None when nothing passed);
- cost_per_trace: cost_usd ÷ the traces the results name that were stored;
- fuse_rate: fused nodes ÷ nodes of those traces;
- p95_latency_ms: the nearest-rank 95th percentile of the results' `latency_ms`;
- per result (a case), its trace's cost.
"""

from dataclasses import dataclass

from core.replica import reading_connection
from provenance.models import Node, Trace
from provenance.percentiles import nearest_rank
from provenance.vocabulary import FUSED

TRACES_SQL = f"""
SELECT t.trace_id, COUNT(n.id), SUM(n.cost_usd), COALESCE(SUM(CASE WHEN {FUSED.sql("n")} THEN 1 ELSE 0 END), 0)
FROM {Trace._meta.db_table} t
LEFT JOIN {Node._meta.db_table} n ON n.project_id = t.project_id AND n.trace_id = t.id
WHERE t.project_id = %s AND t.trace_id IN (SELECT r.trace_id FROM evals_result r WHERE r.project_id = %s AND r.run_id = %s AND r.trace_id <> '')
GROUP BY t.trace_id
"""


@dataclass(frozen=True)
class TraceCost:
    nodes: int
    cost_usd: float | None
    fused: int


def trace_costs(run) -> dict[str, TraceCost]:
    """trace id -> its nodes, cost and fused nodes, for the traces the run's results name."""
    with reading_connection().cursor() as cursor:
        cursor.execute(TRACES_SQL, [run.project_id, run.project_id, run.pk])
        return {trace_id: TraceCost(nodes, cost, fused) for trace_id, nodes, cost, fused in cursor.fetchall()}


def trade_off(traces: dict[str, TraceCost], passed: int, latencies: list[float]) -> dict:
    costs = [t.cost_usd for t in traces.values() if t.cost_usd is not None]
    cost = sum(costs) if costs else None
    nodes = sum(t.nodes for t in traces.values())
    return {
        "cost_usd": cost,
        "cost_per_passed": cost / passed if cost is not None and passed else None,
        "cost_per_trace": cost / len(traces) if cost is not None and traces else None,
        "fuse_rate": sum(t.fused for t in traces.values()) / nodes if nodes else None,
        "p95_latency_ms": nearest_rank(latencies, 95),
    }
