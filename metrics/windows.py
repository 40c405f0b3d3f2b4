"""Exact totals over arbitrary windows: hour rollups for the hours the last
refresh covers, a raw scan for the rest, stitched together.

A question's window is cut into buckets (its series step) and each bucket
into "rolled" hours (whole hours inside it that no node or fuse decision has
touched since the last refresh) and raw "edges" (partial hours at the ends,
hours touched since). Additive figures add up. Distinct traces do not: hourly
counts are summed, traces seen in several rolled hours are subtracted once per
extra hour (metrics.models.TraceSpan), and traces seen on an edge are added
unless they also appear in a rolled hour. Fused runs are stitched per agent in
time order (metrics.runs).

Questions the rollups cannot help (no refresh yet, minute steps, edges longer
than RAW_EDGE_LIMIT, the SQLite default) go to metrics.raw whole.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import connection

from metrics import edges, raw
from metrics.edges import CONFIDENCE, COLUMNS, DIMENSION_INDEX, TRACE, TS, EdgeRows
from metrics.figures import DIMENSIONS, Question, Totals, bucket_floor, buckets
from metrics.models import HourRollup, RolledProject, TraceSpan, Watermark
from metrics.snapshot import one_snapshot
from metrics.runs import ONE_CLEAR, Run, longest
from provenance.bulk import is_postgres
from provenance.models import Fuse, Node

HOUR = timedelta(hours=1)
RAW_EDGE_LIMIT = timedelta(hours=6)
NODE, FUSE = Node._meta.db_table, Fuse._meta.db_table
ROLLUP, SPAN = HourRollup._meta.db_table, TraceSpan._meta.db_table
SUMS = ("nodes", "traces", "confidence_count", "confidence_sum", "low_traces", "accepted", "downweighted", "fused",
        "failed")


@dataclass(frozen=True)
class Coverage:
    """What the rollups hold for a project right now."""

    node_mark: int
    fuse_mark: int
    dirty: frozenset

    @classmethod
    def of(cls, project) -> "Coverage | None":
        if not is_postgres():
            return None
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT w.node_id, w.fuse_id, r.threshold FROM {Watermark._meta.db_table} w "
                f"JOIN {RolledProject._meta.db_table} r ON r.project_id = %s WHERE w.id = 1",
                [project.pk],
            )
            row = cursor.fetchone()
            if row is None or row[2] != project.high_uncertainty_threshold:
                return None
            node_mark, fuse_mark, _ = row
            cursor.execute(
                f"""
                SELECT date_trunc('hour', timestamp, 'UTC') FROM {NODE} WHERE project_id = %s AND id > %s
                UNION
                SELECT date_trunc('hour', n.timestamp, 'UTC') FROM {FUSE} f
                JOIN {NODE} n ON n.project_id = f.project_id AND n.product_id = f.product_id
                WHERE f.project_id = %s AND f.id > %s
                """,
                [project.pk, node_mark, project.pk, fuse_mark],
            )
            return cls(node_mark, fuse_mark, frozenset(row[0] for row in cursor.fetchall()))


@dataclass
class Piece:
    """One bucket of a question: rolled hour ranges and raw edge intervals."""

    key: datetime
    rolled: list = field(default_factory=list)
    edges: list = field(default_factory=list)


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
                    piece.edges.append((cursor, hour))
                if piece.rolled and piece.rolled[-1][1] == hour:
                    piece.rolled[-1] = (piece.rolled[-1][0], hour + HOUR)
                else:
                    piece.rolled.append((hour, hour + HOUR))
                cursor = hour + HOUR
            hour += HOUR
        if cursor < end:
            piece.edges.append((cursor, end))
        pieces.append(piece)
    return pieces


@dataclass
class Group:
    sums: dict = field(default_factory=lambda: dict.fromkeys(SUMS, 0))
    edge_traces: set = field(default_factory=set)
    edge_low: set = field(default_factory=set)
    runs: dict = field(default_factory=lambda: defaultdict(list))

    def totals(self, present: set, present_low: set, with_runs: bool) -> Totals:
        figures = dict(self.sums)
        figures["traces"] += len(self.edge_traces - present)
        figures["low_traces"] += len(self.edge_low - present_low)
        totals = Totals(**figures)
        if with_runs:
            totals.longest_fused_run = longest(self.runs)
        return totals


def answer(project, questions: list[Question], use_rollups: bool = True) -> list[tuple[Question, dict]]:
    """For each question, {(bucket start, `by` value or None): Totals} of the
    groups that have nodes. `use_rollups=False` answers everything from the
    raw scan (the benchmark's baseline)."""
    with one_snapshot():
        return answer_in_snapshot(project, questions, use_rollups)


def answer_in_snapshot(project, questions, use_rollups):
    coverage = Coverage.of(project) if use_rollups else None
    plans = {}
    for index, question in enumerate(questions):
        if coverage is None or question.step == "minute":
            continue
        pieces = cut(question, coverage)
        if sum((end - start for piece in pieces for start, end in piece.edges), timedelta()) <= RAW_EDGE_LIMIT:
            plans[index] = pieces
    edge_rows = EdgeRows.fetch(project, [i for pieces in plans.values() for p in pieces for i in p.edges])
    answers = []
    for index, question in enumerate(questions):
        if index in plans:
            found = stitched(project, question, plans[index], edge_rows)
        else:
            found = raw.grouped(project, question)
        answers.append((question, found))
    return answers


def stitched(project, question: Question, pieces: list[Piece], edge_rows: EdgeRows) -> dict:
    groups: dict[tuple, Group] = defaultdict(Group)
    rolled = [interval for piece in pieces for interval in piece.rolled]
    if rolled:
        add_rolled_sums(project, question, rolled, groups)
        if question.needs_runs:
            add_rolled_runs(project, question, rolled, groups)
    edges.add(question, pieces, edge_rows, groups)
    present, present_low = {}, {}
    if question.needs_traces:
        present, present_low = traces_also_rolled(project, question, pieces, groups)
    return {
        key: group.totals(present.get(key, set()), present_low.get(key, set()), question.needs_runs)
        for key, group in groups.items()
        if group.sums["nodes"]
    }


def dimension_filter(question: Question, prefix: str = "") -> tuple[str, list]:
    chosen = question.filters.dimensions
    clauses = [f"{prefix}{column} = %s" for column in chosen]
    return " AND ".join(clauses) or "TRUE", list(chosen.values())


def mask_of(columns) -> int:
    return sum(1 << DIMENSIONS.index(column) for column in set(columns))


def hour_ranges(rolled: list[tuple]) -> tuple[str, list]:
    return (
        "(" + " OR ".join(["(hour >= %s AND hour < %s)"] * len(rolled)) + ")",
        [moment for interval in rolled for moment in interval],
    )


def group_expressions(question: Question) -> tuple[str, str]:
    bucket = {"": "NULL::timestamptz", "hour": "hour", "day": "date_trunc('day', hour, 'UTC')"}[question.step]
    return bucket, question.by or "NULL"


def group_columns(question: Question) -> str:
    bucket, value = group_expressions(question)
    return f"{bucket} AS bucket, {value} AS value"


def piece_key(question: Question, bucket: datetime | None) -> datetime:
    """Buckets are UTC-aligned, except the first, which starts with the window."""
    return question.start if bucket is None else max(bucket, question.start)


def add_rolled_sums(project, question, rolled, groups) -> None:
    filters, filter_params = dimension_filter(question)
    ranges, range_params = hour_ranges(rolled)
    mask = mask_of([*question.filters.dimensions, *([question.by] if question.by else [])])
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {group_columns(question)}, " + ", ".join(f"SUM({name})" for name in SUMS)
            + f" FROM {ROLLUP} WHERE project_id = %s AND mask = %s AND {filters} AND {ranges} GROUP BY 1, 2",
            [project.pk, mask, *filter_params, *range_params],
        )
        for bucket, value, *sums in cursor.fetchall():
            group = groups[(piece_key(question, bucket), value)]
            for name, amount in zip(SUMS, sums):
                group.sums[name] += amount
        if question.step == "hour" or not question.needs_traces:
            return  # one hour per bucket: no trace is counted twice
        # Unfiltered, ungrouped questions read the (trace, hour) rows; others the rows with every dimension.
        span_mask = 0 if not question.filters.dimensions and not question.by else 15
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
            group = groups[(piece_key(question, bucket), value)]
            group.sums["traces"] -= repeats
            group.sums["low_traces"] -= low_repeats


def add_rolled_runs(project, question, rolled, groups) -> None:
    """Fetches, per group and agent, the hours with a fused node and the first
    and last hour with nodes of each rolled range. Every other hour with nodes
    is clear (no fused node), so wherever one separates two fetched hours
    (`previous` is not the hour fetched before) a clear piece is added: runs
    never stitch across it."""
    filters, filter_params = dimension_filter(question)
    ranges, range_params = hour_ranges(rolled)
    range_of = "CASE " + " ".join(["WHEN hour >= %s AND hour < %s THEN " + str(i) for i in range(len(rolled))]) + " END"
    mask = mask_of(["agent_id", *question.filters.dimensions, *([question.by] if question.by else [])])
    with connection.cursor() as cursor:
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
            [project.pk, mask, *filter_params, *range_params, *range_params],
        )
        rows = cursor.fetchall()
    fetched = {(bucket, value, agent, hour) for bucket, value, hour, agent, *_ in rows}
    for bucket, value, hour, agent, nodes, prefix, suffix, best, previous in rows:
        runs = groups[(piece_key(question, bucket), value)].runs[agent]
        runs.append((hour, Run(nodes, prefix, suffix, best)))
        if previous is not None and (bucket, value, agent, previous) not in fetched:
            runs.append((previous, ONE_CLEAR))


def matches(row: tuple, wanted: list[tuple[int, object]]) -> bool:
    return all(row[index] == value for index, value in wanted)


def traces_also_rolled(project, question, pieces, groups) -> tuple[dict, dict]:
    """For each group, which of its edge traces (and high-uncertainty edge
    traces) also have a matching node in one of its rolled hours."""
    rolled_by_key = {piece.key: piece.rolled for piece in pieces if piece.rolled}
    candidates = {trace for key, group in groups.items() if key[0] in rolled_by_key for trace in group.edge_traces}
    present, present_low = defaultdict(set), defaultdict(set)
    if not candidates:
        return present, present_low
    wanted = [(DIMENSION_INDEX[column], value) for column, value in question.filters.dimensions.items()]
    by = DIMENSION_INDEX.get(question.by)
    threshold = project.high_uncertainty_threshold
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {COLUMNS} FROM {NODE} "
            f"WHERE project_id = %s AND trace_id = ANY(%s) AND timestamp >= %s AND timestamp < %s",
            [project.pk, sorted(candidates), question.start, question.end],
        )
        rows = cursor.fetchall()
    rolled_at = [(piece, [(start.timestamp(), end.timestamp()) for start, end in piece.rolled]) for piece in pieces]
    for row in rows:
        if not matches(row, wanted):
            continue
        for piece, rolled in rolled_at:
            if any(start <= row[TS] < end for start, end in rolled):
                key = (piece.key, row[by] if by is not None else None)
                present[key].add(row[TRACE])
                if row[CONFIDENCE] is not None and row[CONFIDENCE] < threshold:
                    present_low[key].add(row[TRACE])
                break
    return present, present_low


def totals_for(project, requests: list[tuple]) -> list[Totals]:
    """One Totals per (start, end, filters, metrics) request, in order."""
    questions = [Question(start, end, filters, metrics=tuple(metrics)) for start, end, filters, metrics in requests]
    answers = answer(project, questions)
    return [found.get((question.start, None), Totals()) for question, found in answers]
