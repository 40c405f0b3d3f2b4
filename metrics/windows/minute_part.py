"""The whole minutes of a window's partial hours, from the minute rollups
(metrics.models.MinuteRollup, MinuteTrace).

A partial hour at a window's start is a recent interval: no hour rollup holds
it. Under steady ingest it holds up to an hour of nodes, and every Overview
would add them up raw. Its whole minutes whose nodes the minute rollups hold
(Coverage.holds_minute: no fuse decision changed the hour's rolled nodes, no
node past the watermark in the minute) are read from them instead; the rest
(under a minute at each end, the minutes new nodes arrived in) stays raw.

The minute rows are production nodes, all together and per agent, with each
minute's distinct traces per agent and its fused runs per agent. So they
answer questions filtered by agent and split by agent at most
(`holds_question`); distinct traces over several minutes come from the
minute traces, which have no agent: only unfiltered, unsplit questions.
"""

from datetime import datetime, timedelta

from metrics.catalog import NODE_SUMS
from metrics.models import MinuteRollup, MinuteTrace
from metrics.questions import Question, bucket_floor
from metrics.rollups.schema import AGENT_MASK, NO_DIMENSIONS
from metrics.rollups.sql import fetch, filters_sql, interval_index_sql, intervals_sql
from metrics.windows.fused_runs import Run

MINUTE = timedelta(minutes=1)
MINUTE_ROLLUP, MINUTE_TRACE = MinuteRollup._meta.db_table, MinuteTrace._meta.db_table


def holds_filters(question: Question) -> bool:
    """Production nodes, filtered by agent at most, split by agent at most."""
    filters = question.filters
    return filters.in_hour_rollups and set(filters.dimensions) <= {"agent_id"} and question.by in ("", "agent_id")


def holds_question(question: Question) -> bool:
    """Whether minute rows answer the question's intervals of several minutes."""
    if not holds_filters(question):
        return False
    return not question.needs_traces or (not question.filters.dimensions and not question.by)


def mask(question: Question) -> int:
    return AGENT_MASK if question.filters.dimensions or question.by else NO_DIMENSIONS


def split(coverage, start: datetime, end: datetime) -> tuple[list[tuple], list[tuple]]:
    """[start, end) as (raw intervals, whole-minute ranges the minute rollups hold), each merged and in order."""
    raw, held = [], []
    minute = bucket_floor(start, "minute")
    if minute < start:
        minute += MINUTE
    if minute + MINUTE > end:
        return [(start, end)], []
    if start < minute:
        raw.append((start, minute))
    while minute + MINUTE <= end:
        add_interval(held if coverage.holds_minute(minute) else raw, minute, minute + MINUTE)
        minute += MINUTE
    if minute < end:
        add_interval(raw, minute, end)
    return raw, held


def split_parts(coverage, parts: list[tuple]) -> tuple[list[tuple], list[tuple]]:
    """`split` of every (key, start, end) part: (raw parts, held parts), each keeping its key."""
    raw, held = [], []
    for key, start, end in parts:
        raw_intervals, held_intervals = split(coverage, start, end)
        raw += [(key, *interval) for interval in raw_intervals]
        held += [(key, *interval) for interval in held_intervals]
    return raw, held


def add_interval(intervals: list, start: datetime, end: datetime) -> None:
    if intervals and intervals[-1][1] == start:
        intervals[-1] = (intervals[-1][0], end)
    else:
        intervals.append((start, end))


def add(project, question: Question, parts: list[tuple], groups) -> None:
    """Folds the minute ranges `parts` [(piece key, start, end)] into `groups` (metrics.windows.totals.Group)."""
    rows = fetch_rows(project, question, parts, f"mask = {mask(question)}",
                      ", ".join(f"SUM({name})" for name in NODE_SUMS), group=True)
    for part, value, *sums in rows:
        group = groups[(parts[part][0], value)]
        for name, amount in zip(NODE_SUMS, sums):
            group.sums[name] += amount
    if question.needs_traces:
        add_traces(project, parts, groups)
    if question.needs_runs:
        # Every (minute, agent) with nodes is a piece of the agent's sequence: one with no fused node breaks a run.
        rows = fetch_rows(project, question, parts, f"mask = {AGENT_MASK}",
                          "agent_id, minute, nodes, run_prefix, run_suffix, run_best")
        for part, value, agent, minute, *run in rows:
            groups[(parts[part][0], value)].runs[agent].append((minute, Run(*run)))


def fetch_rows(project, question: Question, parts: list[tuple], where: str, columns: str, group: bool = False,
               by_minute: bool = False):
    """(part, `by` value, *columns) of the minute rows in `parts` matching the
    question's filters; `group`: summed per part and value (and minute)."""
    ranges = [(start, end) for _, start, end in parts]
    part_sql, part_params = interval_index_sql("minute", ranges)
    in_ranges, range_params = intervals_sql("minute", ranges)
    filters, filter_params = filters_sql(question.filters.dimensions)
    return fetch(
        f"SELECT {part_sql}, {question.by or 'NULL::varchar'}, {columns} FROM {MINUTE_ROLLUP} "
        f"WHERE project_id = %s AND {where} AND {filters} AND {in_ranges}" + (f" GROUP BY 1, 2{', minute' if by_minute else ''}" if group else ""),
        [*part_params, project.pk, *filter_params, *range_params],
    )


def add_traces(project, parts: list[tuple], groups) -> None:
    """The distinct traces (and high-uncertainty ones) of each part, as ids: a trace seen elsewhere counts once."""
    ranges = [(start, end) for _, start, end in parts]
    part_sql, part_params = interval_index_sql("minute", ranges)
    in_ranges, range_params = intervals_sql("minute", ranges)
    rows = fetch(
        f"SELECT part, array_agg(trace_pk), array_agg(trace_pk) FILTER (WHERE low) FROM ("
        f"SELECT {part_sql} AS part, trace_pk, bool_or(low) AS low FROM {MINUTE_TRACE} "
        f"WHERE project_id = %s AND {in_ranges} GROUP BY 1, 2) AS traces GROUP BY part",
        [*part_params, project.pk, *range_params],
    )
    for part, traces, low in rows:
        group = groups[(parts[part][0], None)]
        group.recent_traces.update(traces or ())
        group.recent_low.update(low or ())
