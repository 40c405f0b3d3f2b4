"""What certainty costs, per fuse policy version: the traces whose fuse
decisions in the window name the version (of the filters' environment), and
over all of their nodes

- the share of cost and of step time spent on the expensive path: nodes the
  SDK marks `metadata.expensive_path` (redundant_sample, reflection_round,
  fuse_retry, cross_check), and nodes that retry a fused node (`retry_of`,
  which recorders other than the SDK send too);
- what that bought: the fuse rate of their nodes, the share of reviewed
  traces whose newest review says correct (accuracy), escalations per trace;
- p95 step latency (nearest rank), cost per trace and cost per correct answer.

Read from the raw rows: one statement, over the traces the window's decisions name."""

from core.dialect import is_postgres
from metrics.questions import Filters
from metrics.rollups.schema import ESCALATION, FUSE, NODE, REVIEW, TRACE
from metrics.rollups.sql import fetch
from provenance.dag.reading import fused_count
from provenance.models import Escalation, Fuse, Node, Review, ReviewVerdict, Trace
from provenance.vocabulary import FUSED, RETRIED

# A node on the expensive path, in SQL over the node table aliased n, and in Python.
EXPENSIVE_SQL = f"({RETRIED.sql('n')} OR n.metadata ->> 'expensive_path' IS NOT NULL)"


def expensive(retry_of: str, metadata) -> bool:
    return bool(retry_of) or (isinstance(metadata, dict) and metadata.get("expensive_path") is not None)


COLUMNS = ("policy_version", "traces", "nodes", "fused", "cost_usd", "expensive_cost_usd", "duration_ms",
           "expensive_duration_ms", "p95_latency_ms", "reviewed", "correct", "escalations")


def by_policy_version(project, start, end, filters: Filters = Filters()) -> list[dict]:
    if not is_postgres():
        return portable(project, start, end, filters)
    rows = fetch(
        f"""
        WITH versions AS (
            SELECT DISTINCT f.policy_version, t.id AS trace_pk, t.project_id
            FROM {FUSE} f JOIN {TRACE} t ON t.project_id = f.project_id AND t.trace_id = f.trace_id
            WHERE f.project_id = %s AND f.timestamp >= %s AND f.timestamp < %s AND t.environment = %s
        ), nodes AS (
            SELECT v.policy_version, COUNT(DISTINCT v.trace_pk) AS traces, COUNT(*) AS nodes,
                COUNT(*) FILTER (WHERE {FUSED.sql('n')}) AS fused,
                SUM(n.cost_usd) AS cost, SUM(n.cost_usd) FILTER (WHERE {EXPENSIVE_SQL}) AS expensive_cost,
                SUM(n.duration_ms) AS duration, SUM(n.duration_ms) FILTER (WHERE {EXPENSIVE_SQL}) AS expensive_duration,
                percentile_disc(0.95) WITHIN GROUP (ORDER BY n.duration_ms) AS p95
            FROM versions v JOIN {NODE} n ON n.project_id = v.project_id AND n.trace_id = v.trace_pk
            GROUP BY 1
        ), outcomes AS (
            SELECT v.policy_version, COUNT(r.verdict) AS reviewed,
                COUNT(*) FILTER (WHERE r.verdict = '{ReviewVerdict.CORRECT.value}') AS correct,
                COALESCE(SUM(e.n), 0) AS escalations
            FROM versions v
            LEFT JOIN LATERAL (SELECT r.verdict FROM {REVIEW} r WHERE r.project_id = v.project_id AND r.trace_id = v.trace_pk
                               ORDER BY r.timestamp DESC, r.id DESC LIMIT 1) r ON true
            LEFT JOIN LATERAL (SELECT COUNT(*) AS n FROM {ESCALATION} e WHERE e.project_id = v.project_id
                                                      AND e.trace_id = v.trace_pk) e ON true
            GROUP BY 1
        )
        SELECT n.policy_version, n.traces, n.nodes, n.fused, n.cost, n.expensive_cost, n.duration,
            n.expensive_duration, n.p95, o.reviewed, o.correct, o.escalations
        FROM nodes n JOIN outcomes o ON o.policy_version IS NOT DISTINCT FROM n.policy_version
        ORDER BY n.policy_version NULLS FIRST
        """,
        [project.pk, start, end, filters.environment],
    )
    return [figures(dict(zip(COLUMNS, row))) for row in rows]


def portable(project, start, end, filters: Filters) -> list[dict]:
    """The same in Python (the embedded SQLite default)."""
    fuses = Fuse.objects.filter(project=project, timestamp__gte=start, timestamp__lt=end)
    names = {name: pk for pk, name in Trace.objects.filter(project=project, environment=filters.environment)
             .values_list("pk", "trace_id")}
    traces: dict = {}
    for version, name in fuses.values_list("policy_version", "trace_id").distinct():
        if name in names:
            traces.setdefault(version, set()).add(names[name])
    result = []
    for version in sorted(traces, key=lambda v: (v is not None, v or 0)):
        pks = traces[version]
        nodes = [(state, expensive(retry_of, metadata), cost, duration) for state, retry_of, metadata, cost, duration
                 in Node.objects.filter(project=project, trace_id__in=pks).values_list("fuse_state", "retry_of", "metadata", "cost_usd",
                                                                      "duration_ms")]
        costs = [c for _, _, c, _ in nodes if c is not None]
        durations = sorted(d for _, _, _, d in nodes if d is not None)
        newest = {}
        for trace_pk, verdict in Review.objects.filter(project=project, trace_id__in=pks).order_by("timestamp", "id").values_list(
                "trace_id", "verdict"):
            newest[trace_pk] = verdict
        result.append(figures({
            "policy_version": version, "traces": len(pks), "nodes": len(nodes),
            "fused": fused_count(state for state, *_ in nodes),
            "cost_usd": sum(costs) if costs else None,
            "expensive_cost_usd": sum(c for _, r, c, _ in nodes if r and c is not None) or None,
            "duration_ms": sum(durations) if durations else None,
            "expensive_duration_ms": sum(d for _, r, _, d in nodes if r and d is not None) or None,
            "p95_latency_ms": durations[-(-95 * len(durations) // 100) - 1] if durations else None,
            "reviewed": len(newest), "correct": sum(1 for v in newest.values() if v == ReviewVerdict.CORRECT),
            "escalations": Escalation.objects.filter(trace_id__in=pks).count(),
        }))
    return result


def share(part, whole):
    return (part or 0) / whole if whole else None


def figures(row: dict) -> dict:
    cost = row["cost_usd"]
    return {
        **row,
        "expensive_cost_share": share(row["expensive_cost_usd"], cost),
        "expensive_latency_share": share(row["expensive_duration_ms"], row["duration_ms"]),
        "fuse_rate": share(row["fused"], row["nodes"]),
        "accuracy": share(row["correct"], row["reviewed"]),
        "escalation_rate": share(row["escalations"], row["traces"]),
        "cost_per_trace": share(cost, row["traces"]) if cost is not None else None,
        "cost_per_correct": cost / row["correct"] if cost is not None and row["correct"] else None,
    }
