"""A window's totals straight from the node table, by the rules of
provenance.vocabulary: the reference the rollups must equal, and the path for the
windows the rollups do not help (minute series, projects not rolled up yet,
the embedded SQLite default)."""

from datetime import UTC, datetime
from functools import reduce
from operator import or_

from django.db.models import Count, F, Q, QuerySet, Sum, Value, Window
from django.db.models.functions import RowNumber, Trunc

from core.replica import reading_connection
from metrics.catalog import COUNTED, Totals
from metrics.filter_match import lookups
from metrics.questions import Filters, Question, bucket_floor
from metrics.rollups.values import orm_narrow
from provenance.models import Node
from provenance.vocabulary import FUSED, HIGH_UNCERTAINTY


def matching_nodes(project, start: datetime, end: datetime, filters: Filters) -> QuerySet:
    nodes = Node.objects.filter(project=project, timestamp__gte=start, timestamp__lt=end, **lookups(filters.dimensions))
    return orm_narrow(nodes, filters, project)


def aggregates(threshold: float, traces: bool = True) -> dict:
    """The Totals' figures as aggregates; without `traces`, not the distinct
    trace counts, which make PostgreSQL sort every group's rows (a minute
    series of fuse rates per agent needs none)."""
    distinct = {
        "traces": Count("trace", distinct=True),
        "low_traces": Count("trace", distinct=True, filter=HIGH_UNCERTAINTY.condition(threshold=threshold)),
    } if traces else {}
    return {
        "nodes": Count("pk"),
        "confidence_count": Count("confidence"),
        "confidence_sum": Sum("confidence"),
        **distinct,
        **{name: Count("pk", filter=rule.condition()) for name, rule in COUNTED.items()},
    }


def grouped(project, question: Question, intervals: list[tuple] | None = None) -> dict[tuple, Totals]:
    """{(bucket start, value of `by` or None): Totals} for the groups that have
    nodes; with `intervals`, of the nodes in those [start, end) only (whole buckets)."""
    nodes = matching_nodes(project, question.start, question.end, question.filters)
    if intervals:
        nodes = nodes.filter(reduce(or_, (Q(timestamp__gte=start, timestamp__lt=end) for start, end in intervals)))
    keys = []
    if question.step:
        nodes = nodes.annotate(bucket=Trunc("timestamp", question.step, tzinfo=UTC))
        keys.append("bucket")
    if question.by:
        keys.append(question.by)
    if not keys:
        nodes = nodes.annotate(whole=Value(1))
        keys.append("whole")
    counted = aggregates(project.high_uncertainty_threshold, question.needs_traces)
    rows = nodes.values(*keys).annotate(**counted).order_by()
    result = {}
    for row in rows:
        if not row["nodes"]:
            continue  # a constant GROUP BY still answers one row for no nodes
        key = group_key(question, row.get("bucket"), row.get(question.by) if question.by else None)
        figures = {name: row[name] for name in counted}
        figures["confidence_sum"] = figures["confidence_sum"] or 0.0
        result[key] = Totals(**figures)
    if question.needs_runs and any(totals.fused for totals in result.values()):
        for key, run in longest_fused_runs(question, nodes, keys).items():
            result[key].longest_fused_run = run
    return result


def group_key(question: Question, bucket: datetime | None, value) -> tuple:
    return question.bucket_key(None if bucket is None else bucket_floor(bucket, question.step)), value


def longest_fused_runs(question: Question, nodes: QuerySet, keys: list[str]) -> dict[tuple, int]:
    """Gaps and islands: within an agent (and group), a run of fused nodes
    keeps the difference between its position among all nodes and among the
    fused ones."""
    order = [F("timestamp").asc(), F("id").asc()]
    partition = [F(key) for key in keys] + [F("agent_id")]
    positioned = nodes.annotate(fused=FUSED.condition()).annotate(
        seq=Window(RowNumber(), partition_by=partition, order_by=order),
        state_seq=Window(RowNumber(), partition_by=[*partition, F("fused")], order_by=order),
    ).values(*keys, "agent_id", "fused", "seq", "state_seq")
    sql, params = positioned.query.sql_with_params()
    group_by = ", ".join(f"s.{reading_connection().ops.quote_name(key)}" for key in keys)
    with reading_connection().cursor() as cursor:
        cursor.execute(
            f"SELECT {group_by}, MAX(n) FROM (SELECT {group_by}, COUNT(*) AS n FROM ({sql}) AS s "
            f"WHERE s.fused GROUP BY {group_by}, s.agent_id, s.seq - s.state_seq) AS s GROUP BY {group_by}",
            params,
        )
        rows = cursor.fetchall()
    result = {}
    for row in rows:
        named = dict(zip(keys, row[:-1]))
        bucket = named.get("bucket")
        if isinstance(bucket, str):  # SQLite hands raw SQL results back as text
            bucket = datetime.fromisoformat(bucket).replace(tzinfo=UTC)
        result[group_key(question, bucket, named.get(question.by) if question.by else None)] = row[-1]
    return result
