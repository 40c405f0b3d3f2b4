"""Series by the minute: each whole minute the minute rollups hold
(Coverage.holds_minute) is one of their rows; the other buckets (a window's
partial first and last minute, the minutes new nodes arrived in) are one raw
scan (metrics.windows.scan) of just those intervals.

A minute row holds its minute's distinct traces all together and per agent,
and each agent's longest fused run: every figure of a bucket, but the
distinct traces of several agents together (a trace with nodes of two of
them would count twice).
"""

from datetime import timedelta

from metrics.catalog import NODE_SUMS, Totals
from metrics.questions import Question, buckets
from metrics.rollups.schema import AGENT_MASK
from metrics.windows import minute_part, scan

MINUTE = timedelta(minutes=1)


def holds_question(question: Question) -> bool:
    if question.step != "minute" or not minute_part.holds_filters(question):
        return False
    several_agents = isinstance(question.filters.agent_id, tuple)
    return not (question.needs_traces and several_agents and not question.by)


def grouped(project, question: Question, coverage) -> dict[tuple, Totals]:
    """What scan.grouped answers for the question."""
    held, raw = [], []
    for start, end in buckets(question):
        whole = end - start == MINUTE and coverage.holds_minute(start)
        minute_part.add_interval(held if whole else raw, start, end)
    found = scan.grouped(project, question, raw) if raw else {}
    if not held:
        return found
    parts = [(None, start, end) for start, end in held]
    # One row per (minute, value): the minute is its own bucket.
    summed = ", ".join(f"SUM({name})" for name in (*NODE_SUMS, "traces", "low_traces"))
    rows = minute_part.fetch_rows(project, question, parts, f"mask = {minute_part.mask(question)}",
                                  f"minute, {summed}", group=True, by_minute=True)
    runs = {}
    if question.needs_runs:
        runs = {(minute, value): best for _, value, minute, best in minute_part.fetch_rows(
            project, question, parts, f"mask = {AGENT_MASK}", "minute, MAX(run_best)", group=True, by_minute=True)}
    for _, value, minute, *sums in rows:
        totals = Totals(**dict(zip((*NODE_SUMS, "traces", "low_traces"), sums)))
        totals.longest_fused_run = runs.get((minute, value), 0)
        found[(question.bucket_key(minute), value)] = totals
    return found
