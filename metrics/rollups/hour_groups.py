"""The SQL that groups an hour's nodes into hour rollups and hour traces
(metrics.models.HourRollup, HourTrace), over a table of node rows: what the
refresh's regrouping of whole hours and its folding in of appended ones
(metrics.rollups.appended_hours) share.

Nodes are grouped per (hour, trace, dimensions) first (TRACE_HOUR_COLUMNS):
every mask then needs only hash aggregates, no distinct sorts, and every
figure of a rollup row is a sum over the traces of its group, which is what
lets the fold subtract a trace's old contribution and add its new one.
"""

from metrics.catalog import COUNTED, FLOAT_SUMS, NODE_SUMS
from metrics.models import HourTrace
from metrics.rollups.fused_runs import runs_sql
from metrics.rollups.schema import (
    AGENT_MASK,
    DIMENSIONS,
    NO_DIMENSIONS,
    NODE,
    PLACEHOLDERS,
    PROJECT,
    mask_columns,
    production_sql,
    same_row_sql,
)
from provenance.vocabulary import HIGH_UNCERTAINTY

HOUR_TRACE = HourTrace._meta.db_table
# The node rows the hour rollups are grouped from (the node table aliased n,
# the project p): the node's hour, its dimensions and what the counts read.
NODE_EXPRESSIONS = {
    "hour": "date_trunc('hour', n.timestamp, 'UTC')", "threshold": "p.high_uncertainty_threshold",
    **{name: f"n.{name}" for name in ("project_id", "trace_id", "agent_id", "step", "source_type", "round",
                                      "confidence", "fuse_state", "is_error", "retry_of", "timestamp", "id")},
}
NODE_COLUMNS = ", ".join(f"{expression} AS {name}" for name, expression in NODE_EXPRESSIONS.items())
NODE_COLUMN_NAMES = ", ".join(NODE_EXPRESSIONS)
NODE_SOURCE = f"{NODE} n JOIN {PROJECT} p ON p.id = n.project_id"
PRODUCTION_NODE = production_sql("n.trace_id")
GROUP_COLUMNS = ("project_id", "hour", "mask", *DIMENSIONS)  # one rollup row's
GROUP_KEY = ", ".join(GROUP_COLUMNS)


def trace_hours_sql(source: str, where: str = "TRUE") -> str:
    """The rows of `source` (node rows) matching `where`, per (hour, trace, dimensions)."""
    counted = ", ".join(f"COUNT(*) FILTER (WHERE {rule.sql()})::int AS {name}" for name, rule in COUNTED.items())
    return f"""
        SELECT project_id, hour, trace_id, agent_id, step, source_type, round,
            COUNT(*)::int AS nodes, COUNT(confidence)::int AS confidence_count,
            COALESCE(SUM(confidence), 0) AS confidence_sum,
            COALESCE(bool_or({HIGH_UNCERTAINTY.sql()}), false) AS low, {counted}
        FROM {source} WHERE {where}
        GROUP BY project_id, hour, trace_id, agent_id, step, source_type, round
    """


def insert_hour_traces(cursor, trace_hours: str) -> None:
    """The hour traces of every (hour, trace) of `trace_hours` (rows of trace_hours_sql)."""
    # In (mask, agent) order: one agent's rows of a refresh share a few pages, which an agent-filtered read fetches.
    sums = "SUM(nodes), SUM(fused), SUM(confidence_count), SUM(confidence_sum)"
    cursor.execute(
        f"""
        INSERT INTO {HOUR_TRACE} (project_id, hour, mask, agent_id, trace_pk, nodes, fused, confidence_count,
            confidence_sum)
        SELECT * FROM (
            SELECT project_id, hour, {NO_DIMENSIONS} AS mask, {PLACEHOLDERS["agent_id"]} AS agent_id, trace_id, {sums}
            FROM {trace_hours} GROUP BY project_id, hour, trace_id
            UNION ALL
            SELECT project_id, hour, {AGENT_MASK}, agent_id, trace_id, {sums}
            FROM {trace_hours} GROUP BY project_id, hour, agent_id, trace_id
        ) AS hour_traces ORDER BY mask, agent_id, hour
        """
    )


def mask_dimensions(columns) -> str:
    """Every dimension column of a mask's rows: its own grouped columns, placeholders for the others."""
    return ", ".join(f"{column if column in columns else PLACEHOLDERS[column]} AS {column}" for column in DIMENSIONS)


def mask_rollup(mask: int, trace_hours: str) -> str:
    """The rollup rows of one mask from `trace_hours` (rows of trace_hours_sql):
    project_id, hour, mask, the dimensions, traces, low_traces and NODE_SUMS.
    A trace counts once per group."""
    columns = mask_columns(mask)
    key = ", ".join(["project_id", "hour", *columns])
    dimensions = mask_dimensions(columns)
    sums = ", ".join(f"SUM({name}) AS {name}" for name in NODE_SUMS)
    # Counts ::int (those of one trace in one hour fit): the sums over them are
    # then bigint, not numeric, several times slower to add up.
    per_trace_sums = ", ".join(f"SUM({name}){'' if name in FLOAT_SUMS else '::int'} AS {name}" for name in NODE_SUMS)
    per_trace = f"""
        SELECT {key}, trace_id, bool_or(low) AS low, {per_trace_sums}
        FROM {trace_hours} GROUP BY {key}, trace_id
    """
    source = trace_hours if len(columns) == len(DIMENSIONS) else f"({per_trace}) AS per_trace"
    return f"""
        SELECT project_id, hour, {mask} AS mask, {dimensions}, COUNT(*) AS traces,
            COUNT(*) FILTER (WHERE low) AS low_traces, {sums}
        FROM {source} GROUP BY {key}
    """


def mask_runs_sql(mask: int, source: str) -> str:
    """The rows (project_id, hour, mask, dimensions, best, prefix, suffix) of
    the mask's groups of `source` (node rows) that had a fused node; the
    others have none."""
    columns = mask_columns(mask)
    return runs_sql(", ".join(["project_id", "hour", *columns]), source,
                    f"project_id, hour, {mask} AS mask, {mask_dimensions(columns)}")


def same_group_sql(left: str, right: str) -> str:
    """Rows `left` and `right` (both with project_id, hour, mask and the dimensions) are of one rollup row."""
    return same_row_sql(left, right, GROUP_COLUMNS, nullable=("round",))
