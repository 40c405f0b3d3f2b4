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

from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import connection

from metrics import raw
from metrics.figures import DIMENSIONS, Question, Totals, bucket_floor, buckets
from metrics.models import HourRollup, RolledProject, TraceSpan, Watermark
from metrics.snapshot import one_snapshot
from metrics.runs import ONE_CLEAR, ONE_FUSED, Run, longest
from provenance.bulk import is_postgres
from provenance.models import Fuse, FuseDecision, Node

HOUR = timedelta(hours=1)
RAW_EDGE_LIMIT = timedelta(hours=6)
BLOCK, DOWNWEIGHT, ACCEPT = int(FuseDecision.BLOCK), int(FuseDecision.DOWNWEIGHT), int(FuseDecision.ACCEPT)
NODE, FUSE = Node._meta.db_table, Fuse._meta.db_table
ROLLUP, SPAN = HourRollup._meta.db_table, TraceSpan._meta.db_table
EDGE_COLUMNS = "timestamp, id, trace_id, agent_id, step, source_type, round, confidence, fuse_state, is_error"
TS, TRACE, CONFIDENCE, STATE, ERROR = 0, 2, 7, 8, 9
DIMENSION_INDEX = {"agent_id": 3, "step": 4, "source_type": 5, "round": 6}
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
    edges = EdgeRows.fetch(project, [i for pieces in plans.values() for p in pieces for i in p.edges])
    answers = []
    for index, question in enumerate(questions):
        if index in plans:
            found = stitched(project, question, plans[index], edges)
        else:
            found = raw.grouped(project, question)
        answers.append((question, found))
    return answers


class EdgeRows:
    """The nodes on every raw edge of a batch, fetched once, in (timestamp, id) order."""

    def __init__(self, rows: list[tuple]):
        self.rows = rows
        self.times = [row[TS] for row in rows]

    @classmethod
    def fetch(cls, project, intervals: list[tuple]) -> "EdgeRows":
        merged = []
        for start, end in sorted(intervals):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        if not merged:
            return cls([])
        ranges = " OR ".join(["(timestamp >= %s AND timestamp < %s)"] * len(merged))
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {EDGE_COLUMNS} FROM {NODE} WHERE project_id = %s AND ({ranges}) ORDER BY timestamp, id",
                [project.pk, *[moment for interval in merged for moment in interval]],
            )
            return cls(cursor.fetchall())

    def between(self, start: datetime, end: datetime) -> list[tuple]:
        return self.rows[bisect_left(self.times, start):bisect_left(self.times, end)]


def stitched(project, question: Question, pieces: list[Piece], edges: EdgeRows) -> dict:
    groups: dict[tuple, Group] = defaultdict(Group)
    rolled = [interval for piece in pieces for interval in piece.rolled]
    if rolled:
        add_rolled_sums(project, question, rolled, groups)
        if question.needs_runs:
            add_rolled_runs(project, question, rolled, groups)
    add_edges(project, question, pieces, edges, groups, question.needs_runs)
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
        # Hash aggregates, not COUNT(DISTINCT …): per (group, trace, hour), then per (group, trace).
        cursor.execute(
            f"""
            WITH presence AS (
                SELECT {group_columns(question)}, trace_pk, hour, bool_or(low) AS low
                FROM {SPAN} WHERE project_id = %s AND {filters} AND {ranges} GROUP BY 1, 2, 3, 4
            ), per_trace AS (
                SELECT bucket, value, COUNT(*) AS hours, COUNT(*) FILTER (WHERE low) AS low_hours
                FROM presence GROUP BY 1, 2, trace_pk
            )
            SELECT bucket, value, SUM(hours - 1)::bigint, SUM(GREATEST(low_hours - 1, 0))::bigint
            FROM per_trace GROUP BY 1, 2
            """,
            [project.pk, *filter_params, *range_params],
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


def add_edges(project, question, pieces, edges: EdgeRows, groups, with_runs: bool) -> None:
    threshold = project.high_uncertainty_threshold
    wanted = [(DIMENSION_INDEX[column], value) for column, value in question.filters.dimensions.items()]
    by = DIMENSION_INDEX.get(question.by)
    for piece in pieces:
        for start, end in piece.edges:
            sequences = defaultdict(list)
            for row in edges.between(start, end):
                if not matches(row, wanted):
                    continue
                key = (piece.key, row[by] if by is not None else None)
                group = groups[key]
                sums = group.sums
                sums["nodes"] += 1
                group.edge_traces.add(row[TRACE])
                confidence = row[CONFIDENCE]
                if confidence is not None:
                    sums["confidence_count"] += 1
                    sums["confidence_sum"] += confidence
                    if confidence < threshold:
                        group.edge_low.add(row[TRACE])
                state = row[STATE]
                sums["accepted"] += state == ACCEPT
                sums["downweighted"] += state == DOWNWEIGHT
                sums["fused"] += state == BLOCK
                sums["failed"] += state == BLOCK or bool(row[ERROR])
                if with_runs:
                    sequences[(key, row[3])].append(ONE_FUSED if state == BLOCK else ONE_CLEAR)
            for (key, agent), pieces_of_run in sequences.items():
                run = Run()
                for one in pieces_of_run:
                    run = run.then(one)
                groups[key].runs[agent].append((start, run))


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
            f"SELECT {EDGE_COLUMNS} FROM {NODE} "
            f"WHERE project_id = %s AND trace_id = ANY(%s) AND timestamp >= %s AND timestamp < %s",
            [project.pk, sorted(candidates), question.start, question.end],
        )
        rows = cursor.fetchall()
    for row in rows:
        if not matches(row, wanted):
            continue
        for piece in pieces:
            if any(start <= row[TS] < end for start, end in piece.rolled):
                key = (piece.key, row[by] if by is not None else None)
                present[key].add(row[TRACE])
                if row[CONFIDENCE] is not None and row[CONFIDENCE] < threshold:
                    present_low[key].add(row[TRACE])
                break
    return present, present_low


def totals_for(project, requests: list[tuple], metrics) -> list[Totals]:
    """One Totals per (start, end, filters) request, in order."""
    questions = [Question(start, end, filters, metrics=tuple(metrics)) for start, end, filters in requests]
    answers = answer(project, questions)
    return [found.get((question.start, None), Totals()) for question, found in answers]
