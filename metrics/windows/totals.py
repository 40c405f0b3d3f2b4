"""Exact totals over arbitrary windows: the hour rollups for the hours the
last refresh covers, up to its watermark (metrics.windows.rollup_part), the
recent rows for the rest (metrics.windows.recent_rows), stitched together.
Additive figures add up; distinct traces are corrected for traces seen on
both sides; fused runs are stitched per agent in time order
(metrics.windows.fused_runs, metrics.windows.fresh_runs).

Questions the rollups cannot help (no refresh yet, minute steps, recent
intervals longer than RECENT_LIMIT, split questions without a rolled hour,
distinct traces under a filter of several values, the SQLite default) go whole to the raw scan (metrics.windows.scan), which is
also the reference the rollups must equal.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta

from metrics.catalog import SUMS, Totals
from metrics.questions import Question
from metrics.rollups.snapshot import one_snapshot
from metrics.windows import minute_part, minute_series, recent_rows, recent_sql, scan
from metrics.windows.fresh_runs import add_fresh_runs
from metrics.windows.fused_runs import longest
from metrics.windows.recent_rows import RecentRows
from metrics.windows.rollup_part import (
    Coverage,
    Piece,
    add_rolled_runs,
    add_rolled_sums,
    cut,
    traces_also_rolled,
)

RECENT_LIMIT = timedelta(hours=6)


@dataclass
class Group:
    """One (bucket, `by` value) of a question while it is being added up."""

    sums: dict = field(default_factory=lambda: dict.fromkeys(SUMS, 0))
    recent_traces: set = field(default_factory=set)
    recent_low: set = field(default_factory=set)
    runs: dict = field(default_factory=lambda: defaultdict(list))

    def totals(self, present: set, present_low: set, with_runs: bool) -> Totals:
        figures = dict(self.sums)
        figures["traces"] += len(self.recent_traces - present)
        figures["low_traces"] += len(self.recent_low - present_low)
        totals = Totals(**figures)
        if with_runs:
            totals.longest_fused_run = longest(self.runs)
        return totals


def answer(project, questions: list[Question], use_rollups: bool = True) -> list[tuple[Question, dict]]:
    """For each question, {(bucket start, `by` value or None): Totals} of the
    groups that have nodes. `use_rollups=False` answers everything from the
    raw scan (the benchmarks' baseline)."""
    few = len(questions) <= recent_sql.FEW_QUESTIONS
    use_rollups = use_rollups and any(rollups_may_help(question, few) or minute_series.holds_question(question)
                                      for question in questions)
    if not use_rollups and len(questions) == 1 and not questions[0].needs_runs:
        # One statement, which sees one snapshot by itself (a scrape of /metrics).
        return [(questions[0], scan.grouped(project, questions[0]))]
    with one_snapshot():
        return answer_in_snapshot(project, questions, use_rollups)


def rollups_may_help(question: Question, few: bool) -> bool:
    """Split questions are added up row by row in Python from the recent
    rows, which only pays when rolled hours spare most of the rows: without a
    whole hour in a bucket (a 15-minute window per agent), SQL groups them
    faster; unless they are `few` (the database adds their recent intervals
    up) and the minute rollups hold their whole minutes."""
    if question.step == "minute" or not question.filters.in_hour_rollups:
        return False
    several = question.filters.several
    if several and (question.needs_traces or (question.needs_runs and several - {"agent_id"})):
        # A trace with nodes of two of the values is in two rollup rows of one hour, and the trace
        # spans correct only across hours; an agent's hour split over two steps cannot be stitched
        # into one run: such distinct traces and fused runs are counted raw.
        return False
    return not question.by or with_minutes(question, few) or any(
        piece.rolled for piece in cut(question, Coverage.NOTHING_DIRTY))


def with_minutes(question: Question, few: bool) -> bool:
    return few and minute_part.holds_question(question)


def answer_in_snapshot(project, questions, use_rollups):
    coverage = Coverage.of(project) if use_rollups else None
    few = len(questions) <= recent_sql.FEW_QUESTIONS
    plans = {}
    for index, question in enumerate(questions):
        if coverage is None or not rollups_may_help(question, few):
            continue
        pieces = cut(question, coverage)
        if question.by and not with_minutes(question, few) and not any(piece.rolled for piece in pieces):
            continue  # every hour of it touched since the refresh: the same as no whole hour
        if sum((end - start for piece in pieces for start, end in piece.recent), timedelta()) <= RECENT_LIMIT:
            plans[index] = pieces
    pieces = [piece for question_pieces in plans.values() for piece in question_pieces]
    # A few questions: their recent intervals are added up by the database (None); many share one fetch.
    recent = None if len(plans) <= recent_sql.FEW_QUESTIONS else RecentRows.fetch(project, [i for p in pieces
                                                                                            for i in p.recent])
    fresh = RecentRows.fetch(project, [i for p in pieces for i in p.fresh], coverage.node_mark if coverage else 0)
    answers = []
    for index, question in enumerate(questions):
        if index in plans:
            found = stitched(project, question, plans[index], recent, fresh, coverage)
        elif coverage is not None and minute_series.holds_question(question):
            found = minute_series.grouped(project, question, coverage)
        else:
            found = scan.grouped(project, question)
        answers.append((question, found))
    return answers


def stitched(project, question: Question, pieces: list[Piece], recent: RecentRows | None, fresh: RecentRows,
             coverage: Coverage) -> dict:
    groups: dict[tuple, Group] = defaultdict(Group)
    rolled = [interval for piece in pieces for interval in piece.rolled]
    if rolled:
        add_rolled_sums(project, question, rolled, groups)
    solid = [interval for piece in pieces for interval in piece.solid()]
    if solid and question.needs_runs:
        add_rolled_runs(project, question, solid, groups)
    if recent is None:
        recent_sql.add(project, question, pieces, groups, coverage)
    recent_rows.add(question, pieces, recent, fresh, groups)
    if question.needs_runs:
        add_fresh_runs(project, question, pieces, fresh, groups, coverage.node_mark)
    present, present_low = {}, {}
    if question.needs_traces:
        present, present_low = traces_also_rolled(project, question, pieces, groups, coverage.node_mark)
    return {
        key: group.totals(present.get(key, set()), present_low.get(key, set()), question.needs_runs)
        for key, group in groups.items()
        if group.sums["nodes"]
    }
