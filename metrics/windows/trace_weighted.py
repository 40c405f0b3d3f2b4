"""Trace-weighted figures of a window, beside the node-weighted ones: every
trace counts once however many nodes it has, so one long run cannot set
them. Over the traces with a node matching the filters in [start, end)
(their environment's, as every figure):

- traces: how many;
- traces_with_fuse_share: the share of them with at least one fused node;
- mean_trace_fuse_rate: the mean over them of their fused nodes / their nodes;
- mean_trace_confidence: the mean, over the traces with a confidence, of
  their nodes' mean confidence.

Each trace's counts over the window are added up (a trace spanning hours sums
them) from the hour traces (metrics.models.HourTrace) of the rolled hours (up
to the watermark), the minute traces (metrics.models.MinuteTrace) of the
whole minutes of recent intervals the minute rollups hold, when unfiltered
(metrics.windows.minute_part), and the raw rows of the rest (recent intervals,
fresh parts past the watermark: metrics.windows.rollup_part), then averaged:
one statement. The hour traces hold production, every node of a trace together
and by agent (a node has one agent, so a trace's rows of the agents asked add
up to its matching nodes); a window filtered by another dimension, a model or
of another environment is grouped from its raw rows, in the same statement
with no rolled hour. `scanned` is the ORM's raw form: the SQLite path and the
reference."""

from django.db.models import Avg, Count, F, FloatField, Q
from django.db.models.functions import Cast

from core.dialect import is_postgres
from core.replica import reading_connection
from metrics.models import HourTrace, MinuteTrace, TraceSpan
from metrics.questions import Filters, Question
from metrics.rollups.schema import NO_DIMENSIONS, NODE, mask_of
from metrics.rollups.snapshot import one_snapshot
from metrics.rollups.sql import filters_sql, intervals_sql, node_filters_sql
from metrics.windows import minute_part
from metrics.windows.rollup_part import Coverage, cut
from metrics.windows.scan import matching_nodes
from provenance.vocabulary import FUSED

FIGURES = ("traces", "traces_with_fuse_share", "mean_trace_fuse_rate", "mean_trace_confidence")
HOUR_TRACE, SPAN, MINUTE_TRACE = HourTrace._meta.db_table, TraceSpan._meta.db_table, MinuteTrace._meta.db_table


def figures(project, start, end, filters: Filters = Filters(), use_rollups: bool = True) -> dict:
    if not is_postgres(reading_connection()):
        return scanned(project, start, end, filters)
    with one_snapshot():
        coverage = Coverage.of(project) if use_rollups and in_hour_traces(filters) else None
        if coverage is None:
            return stitched(project, [], [(start, end)], filters)
        [piece] = cut(Question(start, end, filters), coverage)
        recent, held = piece.recent, []
        if not filters.dimensions:
            # Unfiltered: the whole minutes of the recent intervals from the minute traces.
            raw, whole = minute_part.split_parts(coverage, [(None, *interval) for interval in piece.recent])
            recent, held = [(start, end) for _, start, end in raw], [(start, end) for _, start, end in whole]
        return stitched(project, piece.rolled, recent, filters, piece.fresh, coverage.node_mark, held)


def in_hour_traces(filters: Filters) -> bool:
    return filters.in_hour_rollups and set(filters.dimensions) <= {"agent_id"}


def stitched(project, rolled: list[tuple], recent: list[tuple], filters: Filters, fresh: list[tuple] = (),
             node_mark: int = 0, held: list[tuple] = ()) -> dict:
    """The figures over the hour traces of the `rolled` hour ranges, the minute
    traces of the `held` minute ranges (unfiltered only) and the raw rows of
    the `recent` intervals and, past `node_mark`, of the `fresh` ones.
    Only a trace with rows in two rolled hours (it has trace spans), in a
    recent interval or of several agents asked is added up per trace: most are
    whole in one hour's row, and grouping every one of them was most of the
    statement's time."""
    rolled_sql, rolled_params = intervals_sql("hour", rolled) if rolled else ("false", [])
    # Unfiltered: the rows of every agent together (agent_id ''); by agent: those of the agents asked.
    agent_sql, agent_params = filters_sql({"agent_id": filters.agent_id})
    recent_sql, recent_params = intervals_sql("n.timestamp", recent) if recent else ("false", [])
    fresh_sql, fresh_params = intervals_sql("n.timestamp", fresh) if fresh else ("false", [])
    matching, matching_params = node_filters_sql(project, filters)
    sums = "nodes, fused, confidence_count, confidence_sum"
    # Several agents: a trace has a row per agent in one hour, so every row is added up per trace.
    several = "true" if isinstance(filters.agent_id, tuple) else "false"
    # Recent counts are cast to the hour traces' int: bigint would make their sums numeric, several times slower.
    raw = f"""
        SELECT n.trace_id AS trace_pk, COUNT(*)::int AS nodes,
            COUNT(*) FILTER (WHERE {FUSED.sql("n")})::int AS fused, COUNT(n.confidence)::int AS confidence_count,
            SUM(n.confidence) AS confidence_sum
        FROM {NODE} n WHERE n.project_id = %s AND ({recent_sql} OR (n.id > %s AND {fresh_sql})) AND {matching}
        GROUP BY n.trace_id
    """
    raw_params = [project.pk, *recent_params, node_mark, *fresh_params, *matching_params]
    if held:
        held_sql, held_params = intervals_sql("minute", held)
        raw = f"""
            SELECT trace_pk, SUM(nodes)::int AS nodes, SUM(fused)::int AS fused,
                SUM(confidence_count)::int AS confidence_count, SUM(confidence_sum) AS confidence_sum
            FROM ({raw} UNION ALL SELECT trace_pk, {sums} FROM {MINUTE_TRACE} WHERE project_id = %s AND {held_sql})
            AS parts GROUP BY trace_pk
        """
        raw_params += [project.pk, *held_params]
    with reading_connection().cursor() as cursor:
        cursor.execute(
            f"""
            WITH recent AS MATERIALIZED ({raw}), rolled AS MATERIALIZED (
                SELECT trace_pk, {sums},
                    {several} OR trace_pk IN (SELECT trace_pk FROM {SPAN} WHERE project_id = %s
                                              AND mask = {NO_DIMENSIONS} AND {rolled_sql})
                    OR trace_pk IN (SELECT trace_pk FROM recent) AS shared
                FROM {HOUR_TRACE} WHERE project_id = %s AND mask = %s AND {agent_sql} AND {rolled_sql}
            ), per_trace AS (
                SELECT {sums} FROM rolled WHERE NOT shared
                UNION ALL
                SELECT SUM(nodes), SUM(fused), SUM(confidence_count), SUM(confidence_sum) FROM (
                    SELECT trace_pk, {sums} FROM rolled WHERE shared
                    UNION ALL
                    SELECT trace_pk, {sums} FROM recent
                ) AS parts GROUP BY trace_pk
            )
            SELECT COUNT(*), COUNT(*) FILTER (WHERE fused > 0), AVG(fused::float8 / nodes),
                AVG(confidence_sum / NULLIF(confidence_count, 0))
            FROM per_trace
            """,
            [*raw_params, project.pk, *rolled_params, project.pk, mask_of(filters.dimensions), *agent_params,
             *rolled_params],
        )
        traces, with_fuse, mean_rate, mean_confidence = cursor.fetchone()
    return shaped(traces, with_fuse, mean_rate, mean_confidence)


def scanned(project, start, end, filters: Filters = Filters()) -> dict:
    """The figures grouped per trace from the window's raw rows by the ORM."""
    per_trace = (matching_nodes(project, start, end, filters).order_by().values("trace_id")
                 .annotate(n=Count("pk"), fused=Count("pk", filter=FUSED.condition()), confidence=Avg("confidence")))
    found = per_trace.aggregate(
        traces=Count("trace_id"), with_fuse=Count("trace_id", filter=Q(fused__gt=0)),
        mean_rate=Avg(Cast(F("fused"), FloatField()) / Cast(F("n"), FloatField())), mean_confidence=Avg("confidence"))
    return shaped(found["traces"], found["with_fuse"], found["mean_rate"], found["mean_confidence"])


def shaped(traces, with_fuse, mean_rate, mean_confidence) -> dict:
    traces = traces or 0
    return {"traces": traces, "traces_with_fuse_share": with_fuse / traces if traces else None,
            "mean_trace_fuse_rate": mean_rate if traces else None, "mean_trace_confidence": mean_confidence}
