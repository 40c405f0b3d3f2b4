"""A question's recent intervals added up by the database, for a read of a
few questions (a page, an API request): per group its sums, its distinct
traces (their ids, which metrics.windows.totals corrects for rolled ones)
and, per agent and interval, its fused run; never the rows.

A window's partial start hour is a recent interval, and under steady ingest
it holds up to an hour of nodes: in Python they cost about 1 kB and a few
microseconds each on every Overview. An alert tick asks hundreds of windows
over the same recent rows and keeps metrics.windows.recent_rows: one fetch,
then bisections.
"""

from metrics.catalog import COUNTED
from metrics.rollups.schema import NODE
from metrics.rollups.sql import fetch, filters_sql, interval_index_sql, intervals_sql
from metrics.rollups.values import DEFAULT_ENVIRONMENT, in_environment_sql
from metrics.windows import minute_part
from metrics.windows.fused_runs import Run
from provenance.vocabulary import FUSED, HIGH_UNCERTAINTY

# Batches of up to this many questions are added up here.
FEW_QUESTIONS = 8


def add(project, question, pieces, groups, coverage) -> None:
    """Folds the question's recent intervals into `groups` (metrics.windows.totals.Group):
    their whole minutes the minute rollups hold from those, the rest from the rows."""
    parts = [(piece.key, start, end) for piece in pieces for start, end in piece.recent]
    if parts and minute_part.holds_question(question):
        parts, minutes = minute_part.split_parts(coverage, parts)
        if minutes:
            minute_part.add(project, question, minutes, groups)
    if not parts:
        return
    source = Source(project, question, parts)
    add_sums(question, source, groups)
    if question.needs_runs:
        add_runs(source, groups)


class Source:
    """The question's nodes in the intervals, each labelled with its interval (`part`) and group value."""

    def __init__(self, project, question, parts: list[tuple]):
        self.project, self.parts = project, parts
        intervals = [(start, end) for _, start, end in parts]
        self.part_sql, self.part_params = interval_index_sql("timestamp", intervals)
        self.value_sql = question.by or "NULL::int"
        # What tells the sequences apart, the agent first: a sort comparing constant columns first is several times slower.
        self.sequence_sql = ", ".join(["agent_id", *(["value"] if question.by else []), *(["part"] if len(parts) > 1 else [])])
        ranges, range_params = intervals_sql("timestamp", intervals)
        filters, filter_params = filters_sql(question.filters.dimensions)
        # Production only, as the rollups the figures are stitched to.
        production, production_params = in_environment_sql("trace_id", DEFAULT_ENVIRONMENT, project.pk)
        self.where = f"project_id = %s AND {ranges} AND {filters} AND {production}"
        self.where_params = [project.pk, *range_params, *filter_params, *production_params]


def add_sums(question, source: Source, groups) -> None:
    traces, trace_params = "NULL::bigint[], NULL::bigint[]", []
    if question.needs_traces:
        traces = f"array_agg(DISTINCT trace_id), array_agg(DISTINCT trace_id) FILTER (WHERE {HIGH_UNCERTAINTY.sql(threshold='%s')})"
        trace_params = [source.project.high_uncertainty_threshold]
    counted = ", ".join(f"COUNT(*) FILTER (WHERE {rule.sql()})" for rule in COUNTED.values())
    rows = fetch(
        f"SELECT {source.part_sql}, {source.value_sql}, COUNT(*), COUNT(confidence), COALESCE(SUM(confidence), 0), "
        f"{counted}, {traces} FROM {NODE} WHERE {source.where} GROUP BY 1, 2",
        [*source.part_params, *trace_params, *source.where_params],
    )
    for part, value, nodes, confidence_count, confidence_sum, *rest in rows:
        group = groups[(source.parts[part][0], value)]
        sums = group.sums
        sums["nodes"] += nodes
        sums["confidence_count"] += confidence_count
        sums["confidence_sum"] += confidence_sum
        for name, amount in zip(COUNTED, rest):
            sums[name] += amount
        traces, low = rest[len(COUNTED):]
        group.recent_traces.update(traces or ())
        group.recent_low.update(low or ())


def add_runs(source: Source, groups) -> None:
    """Per interval, group and agent: its nodes in (timestamp, id) order as a
    Run. Numbering the clear nodes in that order, a fused run is the fused
    nodes after the same clear node (or before the first): one sort, which
    also gives each sequence its length and its clear nodes, and only the
    fused nodes and each sequence's first are grouped after it."""
    rows = fetch(
        f"""
        SELECT part, value, agent_id, MAX(length),
            COALESCE(MAX(size) FILTER (WHERE clear_before = 0), 0),
            COALESCE(MAX(size) FILTER (WHERE clear_before = clear), 0),
            COALESCE(MAX(size), 0)
        FROM (
            SELECT part, value, agent_id, clear_before, length, clear, COUNT(*) FILTER (WHERE fused) AS size
            FROM (
                SELECT part, value, agent_id, fused,
                    COUNT(*) FILTER (WHERE NOT fused) OVER (sequence ORDER BY timestamp, id) AS clear_before,
                    ROW_NUMBER() OVER (sequence ORDER BY timestamp, id) AS position,
                    COUNT(*) OVER sequence AS length,
                    COUNT(*) FILTER (WHERE NOT fused) OVER sequence AS clear
                FROM (
                    SELECT {source.part_sql} AS part, {source.value_sql} AS value,
                        agent_id COLLATE "C" AS agent_id, {FUSED.flag_sql()} AS fused, timestamp, id
                    FROM {NODE} WHERE {source.where}
                ) AS nodes
                WINDOW sequence AS (PARTITION BY {source.sequence_sql})
            ) AS counted
            WHERE fused OR position = 1
            GROUP BY part, value, agent_id, clear_before, length, clear
        ) AS runs
        GROUP BY part, value, agent_id
        """,
        [*source.part_params, *source.where_params],
    )
    for part, value, agent, *run in rows:
        key, start, _ = source.parts[part]
        groups[(key, value)].runs[agent].append((start, Run(*run)))
