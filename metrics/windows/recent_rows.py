"""The rows of a batch of questions that no rollup covers, fetched once: the
recent intervals (partial hours at a window's ends, hours whose rolled nodes
changed since the last refresh) whole, and of the fresh parts (hours the
rollups hold up to the watermark) only the nodes past it
(metrics.windows.rollup_part).

Each row carries the rules of provenance.vocabulary as flags computed by the query,
so this module only adds them up. For questions not split by a dimension,
the rows matching a filter set are indexed once (prefix sums, per-agent run
lengths), so each window over them costs a few bisections and C-speed slices
instead of a Python loop per node: an alert tick asks hundreds of short
windows over the same recent rows.
"""

from bisect import bisect_left
from collections import defaultdict
from datetime import datetime
from itertools import accumulate

from core.replica import reading_connection
from metrics.catalog import COUNTED
from metrics.filter_match import matches
from metrics.rollups.schema import DIMENSIONS, NODE
from metrics.rollups.sql import intervals_sql
from metrics.rollups.values import DEFAULT_ENVIRONMENT, in_environment_sql
from metrics.windows.fused_runs import ONE_CLEAR, ONE_FUSED, Run
from provenance.vocabulary import HIGH_UNCERTAINTY

# The timestamp travels as epoch seconds: a float loads far faster than a
# timestamptz, and µs-precise instants stay exact in a double.
COLUMNS = ("EXTRACT(EPOCH FROM timestamp)::float8", "id", "trace_id", *DIMENSIONS, "confidence",
           *(rule.flag_sql() for rule in COUNTED.values()), HIGH_UNCERTAINTY.flag_sql(threshold="%s"))
TS, ID, TRACE, CONFIDENCE = 0, 1, 2, 3 + len(DIMENSIONS)
DIMENSION_INDEX = {column: 3 + i for i, column in enumerate(DIMENSIONS)}
AGENT = DIMENSION_INDEX["agent_id"]
FLAG_INDEX = {name: CONFIDENCE + 1 + i for i, name in enumerate(COUNTED)}
FUSED_FLAG = FLAG_INDEX["fused"]
LOW = CONFIDENCE + 1 + len(COUNTED)


def row_filter(dimensions: dict):
    """Whether a row, as this module reads them, matches the filter dimensions ({column: value})."""
    wanted = [(DIMENSION_INDEX[column], value) for column, value in dimensions.items()]
    return lambda row: all(matches(row[index], value) for index, value in wanted)


def select_sql(where: str) -> str:
    """The rows of `where`, as this module reads them; the first parameter is the project's threshold."""
    return f"SELECT {', '.join(COLUMNS)} FROM {NODE} WHERE {where}"


def merge(intervals: list[tuple]) -> list[tuple]:
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


class AgentSequence:
    """One agent's rows in order: the fused run ending at and starting at each."""

    def __init__(self, times: list[float], fused: list[bool]):
        self.times = times
        self.ending, run = [], 0
        for flag in fused:
            run = run + 1 if flag else 0
            self.ending.append(run)
        self.starting, run = [0] * len(fused), 0
        for index in range(len(fused) - 1, -1, -1):
            run = run + 1 if fused[index] else 0
            self.starting[index] = run

    def run(self, start: float, end: float) -> Run | None:
        a, b = bisect_left(self.times, start), bisect_left(self.times, end)
        length = b - a
        if not length:
            return None
        prefix = min(self.starting[a], length)
        suffix = min(self.ending[b - 1], length)
        # Past the first non-fused node, every run ending inside started inside.
        best = prefix if prefix == length else max(prefix, max(self.ending[a + prefix:b]))
        return Run(length, prefix, suffix, best)


def sequences(rows: list[tuple]) -> dict[str, AgentSequence]:
    times, fused = defaultdict(list), defaultdict(list)
    for row in rows:
        times[row[AGENT]].append(row[TS])
        fused[row[AGENT]].append(row[FUSED_FLAG])
    return {agent: AgentSequence(times[agent], fused[agent]) for agent in times}


class RecentView:
    """The recent rows matching one filter set, as columns and prefix sums."""

    def __init__(self, rows: list[tuple], agents=None):
        self.rows = rows
        self._agents = agents  # a callable giving the per-agent sequences, when they can be shared
        columns = list(zip(*rows)) or [()] * len(COLUMNS)
        self.times = list(columns[TS])
        self.traces = list(columns[TRACE])
        confidence = columns[CONFIDENCE]
        self.low = [t if low else None for t, low in zip(self.traces, columns[LOW])]
        counted = {
            "confidence_count": [c is not None for c in confidence],
            "confidence_sum": [c or 0.0 for c in confidence],
            **{name: columns[index] for name, index in FLAG_INDEX.items()},
        }
        self.prefix = {name: list(accumulate(values, initial=0)) for name, values in counted.items()}

    def agents(self) -> dict[str, AgentSequence]:
        if callable(self._agents):
            self._agents = self._agents()
        if self._agents is None:
            self._agents = sequences(self.rows)
        return self._agents

    def add(self, group, start: datetime, end: datetime, with_runs: bool) -> None:
        """Folds the rows in [start, end) into `group` (a metrics.windows.totals.Group)."""
        start_at, end_at = start.timestamp(), end.timestamp()
        i, j = bisect_left(self.times, start_at), bisect_left(self.times, end_at)
        if i == j:
            return
        sums = group.sums
        sums["nodes"] += j - i
        for name, prefix in self.prefix.items():
            sums[name] += prefix[j] - prefix[i]
        group.recent_traces.update(self.traces[i:j])
        group.recent_low.update(self.low[i:j])
        group.recent_low.discard(None)
        if with_runs:
            for agent, sequence in self.agents().items():
                run = sequence.run(start_at, end_at)
                if run is not None:
                    group.runs[agent].append((start, run))


class RecentRows:
    """Every recent row of a batch, in (timestamp, id) order, with a view per filter set."""

    def __init__(self, rows: list[tuple]):
        self.rows = rows
        self.times = [row[TS] for row in rows]
        self._by_value: dict[str, dict] = {}
        self._views: dict[tuple, RecentView] = {}
        self._sequences: dict[str, AgentSequence] = {}

    @classmethod
    def fetch(cls, project, intervals: list[tuple], past_mark: int | None = None) -> "RecentRows":
        """The rows in `intervals`; with `past_mark`, only those with a greater id
        (the fresh parts' rows, kept apart: another question may read the same
        interval whole)."""
        merged = merge(intervals)
        if not merged:
            return cls([])
        ranges, range_params = intervals_sql("timestamp", merged)
        newer, newer_params = (" AND id > %s", [past_mark]) if past_mark is not None else ("", [])
        # Only production rows: the rollups they are stitched to hold production only.
        production, production_params = in_environment_sql("trace_id", DEFAULT_ENVIRONMENT, project.pk)
        with reading_connection().cursor() as cursor:
            cursor.execute(
                select_sql(f"project_id = %s{newer} AND {ranges} AND {production}") + " ORDER BY timestamp, id",
                [project.high_uncertainty_threshold, project.pk, *newer_params, *range_params, *production_params],
            )
            return cls(cursor.fetchall())

    def between(self, start: datetime, end: datetime) -> list[tuple]:
        return self.rows[bisect_left(self.times, start.timestamp()):bisect_left(self.times, end.timestamp())]

    def view(self, dimensions: dict) -> RecentView:
        key = tuple(sorted(dimensions.items()))
        if key not in self._views:
            rows = self.rows
            if dimensions:
                # Start from the narrowest single-dimension list, then check the others.
                lists = [self.rows_of(column, value) for column, value in dimensions.items()]
                rows = min(lists, key=len)
                if len(dimensions) > 1:
                    rows = list(filter(row_filter(dimensions), rows))
            shared = None
            if not dimensions:
                shared = lambda: {agent: self.sequence(agent) for agent in self.by_value("agent_id")}  # noqa: E731
            elif list(dimensions) == ["agent_id"]:
                agents = dimensions["agent_id"] if isinstance(dimensions["agent_id"], tuple) else (dimensions["agent_id"],)
                shared = lambda: {agent: self.sequence(agent) for agent in agents}  # noqa: E731
            self._views[key] = RecentView(rows, shared)
        return self._views[key]

    def rows_of(self, column: str, value) -> list[tuple]:
        """The rows passing one filter value (several values: their rows, back in (timestamp, id) order)."""
        if not isinstance(value, tuple):
            return self.by_value(column).get(value, [])
        if len(value) == 1:
            return self.by_value(column).get(value[0], [])
        found = self.by_value(column)
        return sorted((row for one in value for row in found.get(one, [])), key=lambda row: (row[TS], row[ID]))

    def sequence(self, agent: str) -> AgentSequence:
        """All of one agent's recent rows, shared by the views that keep them all."""
        if agent not in self._sequences:
            rows = self.by_value("agent_id").get(agent, [])
            self._sequences[agent] = AgentSequence([r[TS] for r in rows], [r[FUSED_FLAG] for r in rows])
        return self._sequences[agent]

    def by_value(self, column: str) -> dict:
        if column not in self._by_value:
            index, found = DIMENSION_INDEX[column], defaultdict(list)
            for row in self.rows:
                found[row[index]].append(row)
            self._by_value[column] = found
        return self._by_value[column]


def parts(piece, recent: RecentRows | None, fresh: RecentRows, with_runs: bool):
    """The piece's intervals, the rows each is read from, and whether their
    fused runs are added here (a fresh part's are stitched to its rollup's by
    metrics.windows.fresh_runs). No `recent` rows: the recent intervals were
    added up by metrics.windows.recent_sql."""
    whole = [(start, end, recent, with_runs) for start, end in piece.recent] if recent is not None else []
    return whole + [(start, end, fresh, False) for start, end in piece.fresh]


def add_split_by(question, pieces, recent: RecentRows | None, fresh: RecentRows, groups) -> None:
    """Questions split by a dimension: one pass over their recent rows."""
    wanted = row_filter(question.filters.dimensions)
    by = DIMENSION_INDEX[question.by]
    flags = list(FLAG_INDEX.items())
    for piece in pieces:
        for start, end, rows, with_runs in parts(piece, recent, fresh, question.needs_runs):
            sequences = defaultdict(list)
            for row in rows.between(start, end):
                if not wanted(row):
                    continue
                key = (piece.key, row[by])
                group = groups[key]
                sums = group.sums
                sums["nodes"] += 1
                group.recent_traces.add(row[TRACE])
                confidence = row[CONFIDENCE]
                if confidence is not None:
                    sums["confidence_count"] += 1
                    sums["confidence_sum"] += confidence
                if row[LOW]:
                    group.recent_low.add(row[TRACE])
                for name, index in flags:
                    sums[name] += row[index]
                if with_runs:
                    sequences[(key, row[AGENT])].append(ONE_FUSED if row[FUSED_FLAG] else ONE_CLEAR)
            for (key, agent), runs in sequences.items():
                run = Run()
                for one in runs:
                    run = run.then(one)
                groups[key].runs[agent].append((start, run))


def add(question, pieces, recent: RecentRows | None, fresh: RecentRows, groups) -> None:
    """Folds the recent intervals' rows and the fresh parts' newer rows into `groups`."""
    if question.by:
        add_split_by(question, pieces, recent, fresh, groups)
        return
    for piece in pieces:
        for start, end, rows, with_runs in parts(piece, recent, fresh, question.needs_runs):
            rows.view(question.filters.dimensions).add(groups[(piece.key, None)], start, end, with_runs)
