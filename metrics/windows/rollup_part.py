"""The part of a window the hour rollups answer: which hours they cover
(Coverage, cut) and their sums, distinct-trace corrections and fused runs.

A question's window is cut into buckets (its series step) and each bucket
into "rolled" hours, "fresh" parts and "recent" intervals:

- a rolled hour is a whole hour inside the bucket that no node or fuse
  decision has touched since the last refresh: its rollup is all of it;
- a fresh part is an hour, or the start of one holding all of that hour's
  rolled nodes (the hour a window ending now is in), that only new nodes
  touched: its rollup holds exactly its nodes up to the watermark (the
  refresh reads nodes by id up to it), so the rollup is read as a rolled
  hour and the part's nodes past the watermark are read as recent rows;
- a recent interval (the other partial hours at the ends, hours whose old
  nodes changed since: a fuse decision arrived about them) is read whole
  from the raw rows by metrics.windows.recent_rows.

Under steady ingest the hour a window ends in is always touched: read whole,
it would cost every Overview and alert tick all of that hour's nodes; fresh,
only those since the last refresh.

Distinct traces do not add up: hourly counts are summed, traces seen in
several rolled hours are subtracted once per extra hour
(metrics.models.TraceSpan), and a trace seen in recent rows is added unless
it also has a rolled node (traces_also_rolled). Fused runs of fresh parts are
stitched by metrics.windows.fresh_runs.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import ClassVar

from core.dialect import is_postgres
from core.replica import reading_connection
from metrics.catalog import SUMS
from metrics.models import HourRollup, TraceSpan
from metrics.questions import Question, bucket_floor, buckets
from metrics.rollups.schema import EVERY_DIMENSION, FUSE, NO_DIMENSIONS, NODE, mask_of
from metrics.rollups.sql import bucket_sql, filters_sql, interval_index_sql, intervals_sql
from metrics.rollups.watermark import read_marks
from metrics.windows.fused_runs import ONE_CLEAR, Run
from metrics.windows.recent_rows import DIMENSION_INDEX, LOW, TRACE, TS, merge, row_filter, select_sql

HOUR = timedelta(hours=1)
ROLLUP, SPAN = HourRollup._meta.db_table, TraceSpan._meta.db_table


@dataclass(frozen=True)
class Coverage:
    """What the rollups hold for a project right now: every node up to
    `node_mark` and fuse decision up to `fuse_mark`, except in the `dirty`
    hours; of those, the `fresh` ones were touched only by nodes past the mark
    (their rollups hold their older nodes exactly), in `new_minutes`."""

    node_mark: int
    fuse_mark: int
    dirty: frozenset
    fresh: frozenset = frozenset()
    project_id: int | None = None  # None: partial hours are never read from the rollups
    new_minutes: frozenset = frozenset()  # the minutes of the nodes past the mark
    _partial: dict = field(default_factory=dict, compare=False, hash=False, repr=False)
    NOTHING_DIRTY: ClassVar["Coverage"]

    @classmethod
    def of(cls, project) -> "Coverage | None":
        if not is_postgres():
            return None
        marks = read_marks(project)
        if marks.rolled_threshold is None or marks.rolled_threshold != project.high_uncertainty_threshold:
            return None
        with reading_connection().cursor() as cursor:
            # New nodes leave an hour's rolled nodes as they were; a new fuse
            # decision about a rolled node changes that node (its fuse state).
            cursor.execute(
                f"""
                SELECT date_trunc('minute', timestamp, 'UTC'), true FROM {NODE} WHERE project_id = %s AND id > %s
                UNION
                SELECT date_trunc('hour', n.timestamp, 'UTC'), false FROM {FUSE} f
                JOIN {NODE} n ON n.project_id = f.project_id AND n.product_id = f.product_id
                WHERE f.project_id = %s AND f.id > %s AND n.id <= %s
                """,
                [project.pk, marks.node, project.pk, marks.fuse, marks.node],
            )
            touched = cursor.fetchall()
        new_minutes = frozenset(minute for minute, only_new in touched if only_new)
        changed = {hour for hour, only_new in touched if not only_new}
        dirty = frozenset({bucket_floor(minute, "hour") for minute in new_minutes} | changed)
        return cls(marks.node, marks.fuse, dirty, dirty - changed, project.pk, new_minutes)

    def holds_minute(self, minute: datetime) -> bool:
        """Whether the minute rollups hold all of `minute`'s nodes: its hour's
        rolled nodes are as they were (no fuse decision changed one) and no
        node past the watermark lies in it."""
        hour = bucket_floor(minute, "hour")
        return (self.project_id is not None and (hour not in self.dirty or hour in self.fresh)
                and minute not in self.new_minutes)

    def holds_part(self, hour: datetime, end: datetime) -> bool:
        """Whether `hour`'s rollup holds exactly its rolled nodes before `end`:
        it has none from `end` on (the hour a window ending now is in). Parts
        starting inside an hour are not asked: the hour's rolled nodes before
        them are what there would be to rule out, and alert windows of minutes
        would each cost a query."""
        if self.project_id is None or (hour in self.dirty and hour not in self.fresh):
            return False
        if (hour, end) not in self._partial:
            with reading_connection().cursor() as cursor:
                cursor.execute(
                    f"SELECT EXISTS (SELECT 1 FROM {NODE} WHERE project_id = %s AND id <= %s "
                    f"AND timestamp >= %s AND timestamp < %s)",
                    [self.project_id, self.node_mark, end, hour + HOUR],
                )
                self._partial[(hour, end)] = not cursor.fetchone()[0]
        return self._partial[(hour, end)]


Coverage.NOTHING_DIRTY = Coverage(0, 0, frozenset())  # every whole hour rolled: the most rollups could answer


@dataclass
class Piece:
    """One bucket of a question: rolled hour ranges, fresh parts (their hours
    are among the rolled ones) and recent intervals."""

    key: datetime
    rolled: list = field(default_factory=list)
    fresh: list = field(default_factory=list)
    recent: list = field(default_factory=list)

    def roll(self, hour: datetime) -> None:
        if self.rolled and self.rolled[-1][1] == hour:
            self.rolled[-1] = (self.rolled[-1][0], hour + HOUR)
        else:
            self.rolled.append((hour, hour + HOUR))

    def add_recent(self, start: datetime, end: datetime) -> None:
        if self.recent and self.recent[-1][1] == start:
            self.recent[-1] = (self.recent[-1][0], end)
        else:
            self.recent.append((start, end))

    def solid(self) -> list[tuple]:
        """The rolled hour ranges without the hours of fresh parts."""
        ranges = []
        fresh_hours = {bucket_floor(start, "hour") for start, _ in self.fresh}
        for start, end in self.rolled:
            hour = start
            while hour < end:
                if hour not in fresh_hours:
                    if ranges and ranges[-1][1] == hour:
                        ranges[-1] = (ranges[-1][0], hour + HOUR)
                    else:
                        ranges.append((hour, hour + HOUR))
                hour += HOUR
        return ranges


def hour_parts(start: datetime, end: datetime):
    """[start, end) split at hour boundaries: (hour, part start, part end)."""
    hour = bucket_floor(start, "hour")
    while hour < end:
        yield hour, max(start, hour), min(end, hour + HOUR)
        hour += HOUR


def cut(question: Question, coverage: Coverage) -> list[Piece]:
    pieces = []
    for start, end in buckets(question):
        piece = Piece(start)
        for hour, part_start, part_end in hour_parts(start, end):
            if part_end - part_start == HOUR:
                rolled = hour not in coverage.dirty or hour in coverage.fresh
            else:
                rolled = part_start == hour and coverage.holds_part(hour, part_end)
            if not rolled:
                piece.add_recent(part_start, part_end)
                continue
            piece.roll(hour)
            if hour in coverage.fresh:
                piece.fresh.append((part_start, part_end))
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
    range_of, range_of_params = interval_index_sql("hour", rolled)
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
            [project.pk, grouped_mask(question, "agent_id"), *filter_params, *range_params, *range_of_params],
        )
        rows = cursor.fetchall()
    fetched = {(bucket, value, agent, hour) for bucket, value, hour, agent, *_ in rows}
    for bucket, value, hour, agent, nodes, prefix, suffix, best, previous in rows:
        runs = groups[(question.bucket_key(bucket), value)].runs[agent]
        runs.append((hour, Run(nodes, prefix, suffix, best)))
        if previous is not None and (bucket, value, agent, previous) not in fetched:
            runs.append((previous, ONE_CLEAR))


def traces_also_rolled(project, question, pieces, groups, node_mark: int) -> tuple[dict, dict]:
    """For each group, which of its recent traces (and high-uncertainty recent
    traces) also have a matching rolled node (in one of its rolled hours, up
    to the watermark: a fresh part's newer nodes are recent)."""
    rolled_by_key = {piece.key: piece.rolled for piece in pieces if piece.rolled}
    candidates = {trace for key, group in groups.items() if key[0] in rolled_by_key for trace in group.recent_traces}
    present, present_low = defaultdict(set), defaultdict(set)
    if not candidates:
        return present, present_low
    wanted = row_filter(question.filters.dimensions)
    by = DIMENSION_INDEX.get(question.by)
    # Only the rolled hours' nodes: the candidates' recent nodes are most of their nodes in the window.
    ranges, range_params = intervals_sql("timestamp", merge([i for piece in pieces for i in piece.rolled]))
    with reading_connection().cursor() as cursor:
        cursor.execute(
            select_sql(f"project_id = %s AND trace_id = ANY(%s) AND timestamp >= %s AND timestamp < %s AND id <= %s "
                       f"AND {ranges}"),
            [project.high_uncertainty_threshold, project.pk, sorted(candidates), question.start, question.end,
             node_mark, *range_params],
        )
        rows = cursor.fetchall()
    rolled_at = [(piece, [(start.timestamp(), end.timestamp()) for start, end in piece.rolled]) for piece in pieces]
    for row in rows:
        if not wanted(row):
            continue
        for piece, rolled in rolled_at:
            if any(start <= row[TS] < end for start, end in rolled):
                key = (piece.key, row[by] if by is not None else None)
                present[key].add(row[TRACE])
                if row[LOW]:
                    present_low[key].add(row[TRACE])
                break
    return present, present_low
