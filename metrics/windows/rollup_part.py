"""The part of a window the hour rollups answer: which hours they cover
(Coverage, cut) and their sums, distinct-trace corrections and fused runs.

A question's window is cut into buckets (its series step) and each bucket
into "rolled" hours (whole hours inside it that no node or fuse decision has
touched since the last refresh) and "recent" intervals (partial hours at the
ends, hours touched since), which metrics.windows.recent_rows answers.
Distinct traces do not add up: hourly counts are summed, traces seen in
several rolled hours are subtracted once per extra hour
(metrics.models.TraceSpan), and a trace seen in a recent interval is added
unless it also appears in a rolled hour (traces_also_rolled).
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import ClassVar

from core.dialect import is_postgres
from core.replica import reading_connection
from metrics.catalog import SUMS
from metrics.filter_match import matches
from metrics.models import HourRollup, TraceSpan
from metrics.questions import Question, bucket_floor, buckets
from metrics.rollups.schema import EVERY_DIMENSION, FUSE, NO_DIMENSIONS, NODE, mask_of
from metrics.rollups.sql import bucket_sql, filters_sql, intervals_sql
from metrics.rollups.watermark import read_marks
from metrics.windows.fused_runs import ONE_CLEAR, Run
from metrics.windows.recent_rows import DIMENSION_INDEX, LOW, TRACE, TS, select_sql

HOUR = timedelta(hours=1)
ROLLUP, SPAN = HourRollup._meta.db_table, TraceSpan._meta.db_table


@dataclass(frozen=True)
class Coverage:
    """What the rollups hold for a project right now."""

    node_mark: int
    fuse_mark: int
    dirty: frozenset
    NOTHING_DIRTY: ClassVar["Coverage"]

    @classmethod
    def of(cls, project) -> "Coverage | None":
        if not is_postgres():
            return None
        marks = read_marks(project)
        if marks.rolled_threshold is None or marks.rolled_threshold != project.high_uncertainty_threshold:
            return None
        with reading_connection().cursor() as cursor:
            cursor.execute(
                f"""
                SELECT date_trunc('hour', timestamp, 'UTC') FROM {NODE} WHERE project_id = %s AND id > %s
                UNION
                SELECT date_trunc('hour', n.timestamp, 'UTC') FROM {FUSE} f
                JOIN {NODE} n ON n.project_id = f.project_id AND n.product_id = f.product_id
                WHERE f.project_id = %s AND f.id > %s
                """,
                [project.pk, marks.node, project.pk, marks.fuse],
            )
            return cls(marks.node, marks.fuse, frozenset(row[0] for row in cursor.fetchall()))


Coverage.NOTHING_DIRTY = Coverage(0, 0, frozenset())  # every whole hour rolled: the most rollups could answer


@dataclass
class Piece:
    """One bucket of a question: rolled hour ranges and recent intervals."""

    key: datetime
    rolled: list = field(default_factory=list)
    recent: list = field(default_factory=list)


def cut(question: Question, coverage: Coverage) -> list[Piece]:
    pieces = []
    for start, end in buckets(question):
        piece = Piece(start)
        hour = bucket_floor(start, "hour")
        if hour < start:
            hour += HOUR
        cursor = start
        while hour + HOUR <= end:
            if hour not in coverage.dirty:
                if hour > cursor:
                    piece.recent.append((cursor, hour))
                if piece.rolled and piece.rolled[-1][1] == hour:
                    piece.rolled[-1] = (piece.rolled[-1][0], hour + HOUR)
                else:
                    piece.rolled.append((hour, hour + HOUR))
                cursor = hour + HOUR
            hour += HOUR
        if cursor < end:
            piece.recent.append((cursor, end))
        pieces.append(piece)
    return pieces


def group_expressions(question: Question) -> tuple[str, str]:
    return bucket_sql(question.step, "hour"), question.by or "NULL"


def group_columns(question: Question) -> str:
    bucket, value = group_expressions(question)
    return f"{bucket} AS bucket, {value} AS value"


def grouped_mask(question: Question, *extra: str) -> int:
    return mask_of([*extra, *question.filters.dimensions, *([question.by] if question.by else [])])


def add_rolled_sums(project, question, rolled, groups) -> None:
    filters, filter_params = filters_sql(question.filters.dimensions)
    ranges, range_params = intervals_sql("hour", rolled)
    with reading_connection().cursor() as cursor:
        cursor.execute(
            f"SELECT {group_columns(question)}, " + ", ".join(f"SUM({name})" for name in SUMS)
            + f" FROM {ROLLUP} WHERE project_id = %s AND mask = %s AND {filters} AND {ranges} GROUP BY 1, 2",
            [project.pk, grouped_mask(question), *filter_params, *range_params],
        )
        for bucket, value, *sums in cursor.fetchall():
            group = groups[(question.bucket_key(bucket), value)]
            for name, amount in zip(SUMS, sums):
                group.sums[name] += amount
        if question.step == "hour" or not question.needs_traces:
            return  # one hour per bucket: no trace is counted twice
        # Unfiltered, ungrouped questions read the (trace, hour) rows; others the rows with every dimension.
        span_mask = NO_DIMENSIONS if not question.filters.dimensions and not question.by else EVERY_DIMENSION
        # Hash aggregates, not COUNT(DISTINCT …): per (group, trace, hour), then per (group, trace).
        cursor.execute(
            f"""
            WITH presence AS (
                SELECT {group_columns(question)}, trace_pk, hour, bool_or(low) AS low
                FROM {SPAN} WHERE project_id = %s AND mask = %s AND {filters} AND {ranges} GROUP BY 1, 2, 3, 4
            ), per_trace AS (
                SELECT bucket, value, COUNT(*) AS hours, COUNT(*) FILTER (WHERE low) AS low_hours
                FROM presence GROUP BY 1, 2, trace_pk
            )
            SELECT bucket, value, SUM(hours - 1)::bigint, SUM(GREATEST(low_hours - 1, 0))::bigint
            FROM per_trace GROUP BY 1, 2
            """,
            [project.pk, span_mask, *filter_params, *range_params],
        )
        for bucket, value, repeats, low_repeats in cursor.fetchall():
            group = groups[(question.bucket_key(bucket), value)]
            group.sums["traces"] -= repeats
            group.sums["low_traces"] -= low_repeats


def add_rolled_runs(project, question, rolled, groups) -> None:
    """Fetches, per group and agent, the hours with a fused node and the first
    and last hour with nodes of each rolled range. Every other hour with nodes
    is clear (no fused node), so wherever one separates two fetched hours
    (`previous` is not the hour fetched before) a clear piece is added: runs
    never stitch across it."""
    filters, filter_params = filters_sql(question.filters.dimensions)
    ranges, range_params = intervals_sql("hour", rolled)
    range_of = "CASE " + " ".join(["WHEN hour >= %s AND hour < %s THEN " + str(i) for i in range(len(rolled))]) + " END"
    with reading_connection().cursor() as cursor:
        cursor.execute(
            f"""
            SELECT bucket, value, hour, agent_id, nodes, run_prefix, run_suffix, run_best, previous FROM (
                SELECT {group_columns(question)}, hour, agent_id, nodes, run_prefix, run_suffix, run_best,
                    LAG(hour) OVER sequence AS previous, LEAD(hour) OVER sequence AS following
                FROM {ROLLUP} WHERE project_id = %s AND mask = %s AND {filters} AND {ranges}
                WINDOW sequence AS (PARTITION BY {", ".join(group_expressions(question))}, agent_id, {range_of}
                                    ORDER BY hour)
            ) AS hours WHERE run_best > 0 OR previous IS NULL OR following IS NULL
            """,
            [project.pk, grouped_mask(question, "agent_id"), *filter_params, *range_params, *range_params],
        )
        rows = cursor.fetchall()
    fetched = {(bucket, value, agent, hour) for bucket, value, hour, agent, *_ in rows}
    for bucket, value, hour, agent, nodes, prefix, suffix, best, previous in rows:
        runs = groups[(question.bucket_key(bucket), value)].runs[agent]
        runs.append((hour, Run(nodes, prefix, suffix, best)))
        if previous is not None and (bucket, value, agent, previous) not in fetched:
            runs.append((previous, ONE_CLEAR))


def traces_also_rolled(project, question, pieces, groups) -> tuple[dict, dict]:
    """For each group, which of its recent traces (and high-uncertainty recent
    traces) also have a matching node in one of its rolled hours."""
    rolled_by_key = {piece.key: piece.rolled for piece in pieces if piece.rolled}
    candidates = {trace for key, group in groups.items() if key[0] in rolled_by_key for trace in group.recent_traces}
    present, present_low = defaultdict(set), defaultdict(set)
    if not candidates:
        return present, present_low
    wanted = [(DIMENSION_INDEX[column], value) for column, value in question.filters.dimensions.items()]
    by = DIMENSION_INDEX.get(question.by)
    with reading_connection().cursor() as cursor:
        cursor.execute(
            select_sql("project_id = %s AND trace_id = ANY(%s) AND timestamp >= %s AND timestamp < %s"),
            [project.high_uncertainty_threshold, project.pk, sorted(candidates), question.start, question.end],
        )
        rows = cursor.fetchall()
    rolled_at = [(piece, [(start.timestamp(), end.timestamp()) for start, end in piece.rolled]) for piece in pieces]
    for row in rows:
        if not all(matches(row[index], value) for index, value in wanted):
            continue
        for piece, rolled in rolled_at:
            if any(start <= row[TS] < end for start, end in rolled):
                key = (piece.key, row[by] if by is not None else None)
                present[key].add(row[TRACE])
                if row[LOW]:
                    present_low[key].add(row[TRACE])
                break
    return present, present_low
