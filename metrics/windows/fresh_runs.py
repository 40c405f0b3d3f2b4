"""Fused runs over the fresh parts of a window (metrics.windows.rollup_part):
hours whose rollup holds their nodes up to the watermark, with newer nodes
read as recent rows.

A run is counted over an agent's nodes in (timestamp, id) order. When an
agent's new nodes all come after its rolled ones, the part's run is the
rollup's followed by the new nodes'. But writers commit out of timestamp
order, so rolled nodes may come after an agent's first new node (its tail).
Then the rolled nodes are read back from the end of the part, newest first,
to the last clear (not fused) one at or before the first new node. The
rolled nodes up to it (the head) end with no fused run, so the head's run
follows from the rollup's and the tail's: its length, and the run it starts
with. The longest run inside the head is the rollup's longest, unless the
tail holds one as long; only when the tail and the new nodes merged then hold
a shorter one is the head read too, to the start of the part.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime

from core.replica import reading_connection
from metrics.questions import bucket_floor
from metrics.rollups.sql import filters_sql
from metrics.rollups.values import DEFAULT_ENVIRONMENT, in_environment_sql
from metrics.windows.fused_runs import Run
from metrics.windows.recent_rows import AGENT, DIMENSION_INDEX, FUSED_FLAG, ID, TS, RecentRows, row_filter, select_sql
from metrics.windows.rollup_part import ROLLUP, group_expressions, grouped_mask

# Rolled nodes read back by the first statement: the tails of concurrent
# writers are seconds long. Each further statement reads twice as many (up to
# LARGEST_CHUNK), so a backlog's early timestamps cost a few statements, not thousands.
CHUNK = 2000
LARGEST_CHUNK = 64000

OPEN, DONE, WHOLE = "open", "done", "whole"


@dataclass
class Sequence:
    """One (`by` value, agent)'s nodes in a fresh part."""

    rolled: Run | None = None  # the rollup's run over its rolled nodes
    new: list = field(default_factory=list)  # (timestamp, id, fused) of the nodes past the watermark, in order
    tail: list = field(default_factory=list)  # rolled nodes read back (newest first) that the run is worked out from
    state: str = OPEN

    def read_back(self, node: tuple) -> None:
        """Takes the next rolled node back from the end of the part."""
        if self.state == WHOLE:
            self.tail.append(node)
        elif node[0] > self.new[0][0]:
            self.tail.append(node)  # after the first new node: in the tail
        elif not self.tail:
            self.state = DONE  # no rolled node after the first new one
        elif node[2]:
            self.tail.append(node)  # a fused run running into the tail belongs with it
        elif self.head_known():
            self.state = DONE
        else:
            self.state = WHOLE
            self.tail.append(node)

    def head_known(self) -> bool:
        tail, merged = self.tail_run(), self.merged_run()
        return self.rolled.best > tail.best or merged.best >= self.rolled.best

    def tail_run(self) -> Run:
        return Run.of(fused for _, _, fused in reversed(self.tail))

    def merged_run(self) -> Run:
        return Run.of(fused for _, _, fused in sorted(self.tail + self.new))

    def run(self) -> Run:
        if not self.new:
            return self.rolled
        if self.rolled is None:
            return Run.of(fused for _, _, fused in self.new)
        if self.state != DONE:
            return self.merged_run()  # every rolled node of the part was read
        if not self.tail:
            return self.rolled.then(Run.of(fused for _, _, fused in self.new))
        tail = self.tail_run()
        # The head ends with a clear node: no run of it reaches the tail, so the rollup's best is
        # either the head's or the tail's; when the tail's, head_known() found the merged run longer.
        best = self.rolled.best if self.rolled.best > tail.best else 0
        head = Run(self.rolled.length - tail.length, self.rolled.prefix, 0, best)
        return head.then(self.merged_run())


def add_fresh_runs(project, question, pieces, recent: RecentRows, groups, node_mark: int) -> None:
    """Adds each fresh part's runs, per group and agent, to `groups` (metrics.windows.totals.Group)."""
    parts = [(piece.key, start, end) for piece in pieces for start, end in piece.fresh]
    if not parts:
        return
    rolled = rolled_runs(project, question, sorted({bucket_floor(start, "hour") for _, start, _ in parts}))
    wanted = row_filter(question.filters.dimensions)
    for key, start, end in parts:
        sequences = defaultdict(Sequence)
        for (value, agent), run in rolled[bucket_floor(start, "hour")].items():
            sequences[(value, agent)].rolled = run
        for row in recent.between(start, end):
            if wanted(row):
                sequences[(value_of(question, row), row[AGENT])].new.append((row[TS], row[ID], row[FUSED_FLAG]))
        read_back(project, question, wanted, start, end, node_mark, sequences)
        for (value, agent), sequence in sequences.items():
            groups[(key, value)].runs[agent].append((start, sequence.run()))


def value_of(question, row):
    return row[DIMENSION_INDEX[question.by]] if question.by else None


def rolled_runs(project, question, hours: list) -> dict:
    """{hour: {(`by` value, agent): Run}} from the rollups of the fresh parts' hours."""
    filters, filter_params = filters_sql(question.filters.dimensions)
    _, value = group_expressions(question)
    with reading_connection().cursor() as cursor:
        cursor.execute(
            f"SELECT hour, {value}, agent_id, nodes, run_prefix, run_suffix, run_best FROM {ROLLUP} "
            f"WHERE project_id = %s AND mask = %s AND {filters} AND hour = ANY(%s)",
            [project.pk, grouped_mask(question, "agent_id"), *filter_params, hours],
        )
        found = defaultdict(dict)
        for hour, value, agent, *run in cursor.fetchall():
            found[hour][(value, agent)] = Run(*run)
        return found


def read_back(project, question, wanted, start, end, node_mark: int, sequences: dict) -> None:
    """Reads the part's rolled nodes (those `wanted`: the question's filters)
    newest first, a chunk at a time, until every sequence with new nodes knows its run."""
    production, production_params = in_environment_sql("trace_id", DEFAULT_ENVIRONMENT, project.pk)
    after, after_params, chunk = "", [], CHUNK
    while any(s.new and s.rolled is not None and s.state != DONE for s in sequences.values()):
        with reading_connection().cursor() as cursor:
            cursor.execute(
                select_sql(f"project_id = %s AND id <= %s AND timestamp >= %s AND timestamp < %s AND {production}"
                           f"{after}") + f" ORDER BY timestamp DESC, id DESC LIMIT {chunk}",
                [project.high_uncertainty_threshold, project.pk, node_mark, start, end, *production_params,
                 *after_params],
            )
            rows = cursor.fetchall()
        for row in rows:
            if not wanted(row):
                continue
            sequence = sequences.get((value_of(question, row), row[AGENT]))
            if sequence is not None and sequence.new and sequence.state != DONE:
                sequence.read_back((row[TS], row[ID], row[FUSED_FLAG]))
        if len(rows) < chunk:
            # The start of the part: every rolled node of the sequences still reading was read.
            for sequence in sequences.values():
                if sequence.state == OPEN:
                    sequence.state = WHOLE
            return
        # Keyset: the timestamp bound is what the (project, timestamp) index can seek to.
        last_at = datetime.fromtimestamp(rows[-1][TS], UTC)
        after = " AND timestamp <= %s AND (timestamp, id) < (%s, %s)"
        after_params = [last_at, last_at, rows[-1][ID]]
        chunk = min(2 * chunk, LARGEST_CHUNK)
