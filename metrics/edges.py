"""The raw edges of a batch of questions: the nodes no rollup covers (partial
hours at a window's ends, hours touched since the last refresh), fetched once.

For questions not split by a dimension, the rows matching a filter set are
indexed once (prefix sums, per-agent run lengths), so each window over them
costs a few bisections and C-speed slices instead of a Python loop per node:
an alert tick asks hundreds of short windows over the same recent rows.
"""

from bisect import bisect_left
from collections import defaultdict
from datetime import datetime
from itertools import accumulate

from django.db import connection

from metrics.figures import DIMENSIONS
from metrics.runs import ONE_CLEAR, ONE_FUSED, Run
from provenance.models import FuseDecision, Node

BLOCK, DOWNWEIGHT, ACCEPT = int(FuseDecision.BLOCK), int(FuseDecision.DOWNWEIGHT), int(FuseDecision.ACCEPT)
NODE = Node._meta.db_table
# The timestamp travels as epoch seconds: a float loads far faster than a
# timestamptz, and µs-precise instants stay exact in a double.
COLUMNS = ("EXTRACT(EPOCH FROM timestamp)::float8, id, trace_id, agent_id, step, source_type, round, confidence, "
           "fuse_state, is_error")
TS, TRACE, AGENT, CONFIDENCE, STATE, ERROR = 0, 2, 3, 7, 8, 9
DIMENSION_INDEX = {"agent_id": 3, "step": 4, "source_type": 5, "round": 6}
COUNTED = ("confidence_count", "confidence_sum", "accepted", "downweighted", "fused", "failed")


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
        fused[row[AGENT]].append(row[STATE] == BLOCK)
    return {agent: AgentSequence(times[agent], fused[agent]) for agent in times}


class EdgeView:
    """The edge rows matching one filter set, as columns and prefix sums."""

    def __init__(self, rows: list[tuple], threshold: float, agents=None):
        self.rows = rows
        self._agents = agents  # a callable giving the per-agent sequences, when they can be shared
        columns = list(zip(*rows)) or [()] * 10
        self.times = list(columns[TS])
        self.traces = list(columns[TRACE])
        confidence, state, error = columns[CONFIDENCE], columns[STATE], columns[ERROR]
        self.low = [t if c is not None and c < threshold else None for t, c in zip(self.traces, confidence)]
        counted = {
            "confidence_count": [c is not None for c in confidence],
            "confidence_sum": [c or 0.0 for c in confidence],
            "accepted": [s == ACCEPT for s in state],
            "downweighted": [s == DOWNWEIGHT for s in state],
            "fused": [s == BLOCK for s in state],
            "failed": [s == BLOCK or e for s, e in zip(state, error)],
        }
        self.prefix = {name: list(accumulate(values, initial=0)) for name, values in counted.items()}

    def agents(self) -> dict[str, AgentSequence]:
        if callable(self._agents):
            self._agents = self._agents()
        if self._agents is None:
            self._agents = sequences(self.rows)
        return self._agents

    def add(self, group, start: datetime, end: datetime, with_runs: bool) -> None:
        """Folds the rows in [start, end) into `group` (a metrics.windows.Group)."""
        start_at, end_at = start.timestamp(), end.timestamp()
        i, j = bisect_left(self.times, start_at), bisect_left(self.times, end_at)
        if i == j:
            return
        sums = group.sums
        sums["nodes"] += j - i
        for name in COUNTED:
            sums[name] += self.prefix[name][j] - self.prefix[name][i]
        group.edge_traces.update(self.traces[i:j])
        group.edge_low.update(self.low[i:j])
        group.edge_low.discard(None)
        if with_runs:
            for agent, sequence in self.agents().items():
                run = sequence.run(start_at, end_at)
                if run is not None:
                    group.runs[agent].append((start, run))


class EdgeRows:
    """Every edge row of a batch, in (timestamp, id) order, with a view per filter set."""

    def __init__(self, rows: list[tuple], threshold: float):
        self.rows = rows
        self.times = [row[TS] for row in rows]
        self.threshold = threshold
        self._by_value: dict[str, dict] = {}
        self._views: dict[tuple, EdgeView] = {}
        self._sequences: dict[str, AgentSequence] = {}

    @classmethod
    def fetch(cls, project, intervals: list[tuple]) -> "EdgeRows":
        merged = merge(intervals)
        if not merged:
            return cls([], project.high_uncertainty_threshold)
        ranges = " OR ".join(["(timestamp >= %s AND timestamp < %s)"] * len(merged))
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {COLUMNS} FROM {NODE} WHERE project_id = %s AND ({ranges}) ORDER BY timestamp, id",
                [project.pk, *[moment for interval in merged for moment in interval]],
            )
            return cls(cursor.fetchall(), project.high_uncertainty_threshold)

    def between(self, start: datetime, end: datetime) -> list[tuple]:
        return self.rows[bisect_left(self.times, start.timestamp()):bisect_left(self.times, end.timestamp())]

    def view(self, dimensions: dict) -> EdgeView:
        key = tuple(sorted(dimensions.items()))
        if key not in self._views:
            rows = self.rows
            if dimensions:
                # Start from the narrowest single-dimension list, then check the others.
                lists = [self.by_value(column).get(value, []) for column, value in dimensions.items()]
                rows = min(lists, key=len)
                if len(dimensions) > 1:
                    wanted = [(DIMENSION_INDEX[column], value) for column, value in dimensions.items()]
                    rows = [row for row in rows if all(row[index] == value for index, value in wanted)]
            shared = None
            if not dimensions:
                shared = lambda: {agent: self.sequence(agent) for agent in self.by_value("agent_id")}  # noqa: E731
            elif list(dimensions) == ["agent_id"]:
                shared = lambda: {dimensions["agent_id"]: self.sequence(dimensions["agent_id"])}  # noqa: E731
            self._views[key] = EdgeView(rows, self.threshold, shared)
        return self._views[key]

    def sequence(self, agent: str) -> AgentSequence:
        """All of one agent's edge rows, shared by the views that keep them all."""
        if agent not in self._sequences:
            rows = self.by_value("agent_id").get(agent, [])
            self._sequences[agent] = AgentSequence([r[TS] for r in rows], [r[STATE] == BLOCK for r in rows])
        return self._sequences[agent]

    def by_value(self, column: str) -> dict:
        if column not in self._by_value:
            index, found = DIMENSION_INDEX[column], defaultdict(list)
            for row in self.rows:
                found[row[index]].append(row)
            self._by_value[column] = found
        return self._by_value[column]


def add_split_by(question, pieces, edges: EdgeRows, groups, with_runs: bool) -> None:
    """Questions split by a dimension: one pass over their edge rows."""
    threshold = edges.threshold
    wanted = [(DIMENSION_INDEX[column], value) for column, value in question.filters.dimensions.items()]
    by = DIMENSION_INDEX[question.by]
    for piece in pieces:
        for start, end in piece.edges:
            sequences = defaultdict(list)
            for row in edges.between(start, end):
                if not all(row[index] == value for index, value in wanted):
                    continue
                key = (piece.key, row[by])
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
                    sequences[(key, row[AGENT])].append(ONE_FUSED if state == BLOCK else ONE_CLEAR)
            for (key, agent), flags in sequences.items():
                run = Run()
                for one in flags:
                    run = run.then(one)
                groups[key].runs[agent].append((start, run))


def add(question, pieces, edges: EdgeRows, groups) -> None:
    if question.by:
        add_split_by(question, pieces, edges, groups, question.needs_runs)
        return
    view = edges.view(question.filters.dimensions)
    for piece in pieces:
        for start, end in piece.edges:
            view.add(groups[(piece.key, None)], start, end, question.needs_runs)


assert set(DIMENSION_INDEX) == set(DIMENSIONS)
