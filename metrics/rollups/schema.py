"""What the rollup tables and their readers share, defined once: the filter
dimensions and the masks that say which of them a rollup row is grouped by,
which entries of Node.metrics are metric values, the histogram grid, the clamp
on metric values, the provenance table names, and the SQL fragments both the
refresh job and the read paths run (which node a review judges, the values a node
contributes to the histograms, fuse decisions paired with their node).

What a node counts as (fused, failed, high-uncertainty, …) is not here but in
provenance.vocabulary, with the fuse decision codes: the product's rules, not
the storage's.
"""

import math

from provenance.models import Edge, Escalation, Fuse, Node, Review, ReviewVerdict, Trace
from provenance.vocabulary import final_answer_sql
from tenancy.models import Project

NODE, FUSE, EDGE = Node._meta.db_table, Fuse._meta.db_table, Edge._meta.db_table
PROJECT, REVIEW, TRACE = Project._meta.db_table, Review._meta.db_table, Trace._meta.db_table
ESCALATION = Escalation._meta.db_table

# The hour rollups, trace spans, histograms, fuse reasons, escalations, review
# targets and policy hours hold production only (metrics.questions.Filters.in_hour_rollups):
# another environment is read from the raw rows. The statistics rollup is
# keyed by environment instead. The refresh job lists the other environments'
# traces (few) once, in this temporary table, for every statement to leave out.
OTHER_ENVIRONMENTS = "metrics_other_environments"


def production_sql(trace_pk: str) -> str:
    return f"{trace_pk} NOT IN (SELECT id FROM {OTHER_ENVIRONMENTS})"


def production_key_sql(project: str, trace_key: str) -> str:
    """The same for a trace named by its key (a fuse decision's `trace_id`):
    a key no trace holds yet counts as production, as its trace will."""
    return (f"NOT EXISTS (SELECT 1 FROM {TRACE} t_other WHERE t_other.project_id = {project} "
            f"AND t_other.trace_id = {trace_key} AND t_other.id IN (SELECT id FROM {OTHER_ENVIRONMENTS}))")

# ---- dimensions and masks
# Bit i of a rollup row's mask is set when the row is grouped by DIMENSIONS[i];
# the other dimension columns hold PLACEHOLDERS.
DIMENSIONS = ("agent_id", "step", "source_type", "round")
PLACEHOLDERS = {"agent_id": "''::varchar", "step": "''::varchar", "source_type": "''::varchar", "round": "NULL::int"}


def mask_of(columns) -> int:
    """The mask of rows grouped by exactly these dimensions."""
    return sum(1 << DIMENSIONS.index(column) for column in set(columns))


def mask_columns(mask: int) -> list[str]:
    """The dimensions a mask groups by, in DIMENSIONS order."""
    return [column for bit, column in enumerate(DIMENSIONS) if mask & (1 << bit)]


TEXT_DIMENSIONS = ("agent_id", "step", "source_type")


def partition_sql(key: str) -> str:
    """`key` (a comma-separated list of columns, maybe qualified) for PARTITION
    BY: its text dimensions compared bytewise (COLLATE "C"). A partition needs
    only equal values together, and the database's collation (C.UTF-8 here)
    sorts through strcoll: 3.4 s of a 4.6 s statement sorting 650,000 rows."""
    def collated(column: str) -> str:
        return f'{column} COLLATE "C"' if column.split(".")[-1] in TEXT_DIMENSIONS else column

    return ", ".join(collated(column.strip()) for column in key.split(","))


def same_row_sql(left: str, right: str, columns, nullable=()) -> str:
    """Rows `left` and `right` agree on `columns`: equalities where they hold
    (what a hash join keys on), IS NOT DISTINCT FROM for the `nullable` ones."""
    return " AND ".join(f"{left}.{c} IS NOT DISTINCT FROM {right}.{c}" if c in nullable else f"{left}.{c} = {right}.{c}"
                        for c in columns)


MASKS = range(1 << len(DIMENSIONS))
NO_DIMENSIONS = mask_of([])
EVERY_DIMENSION = mask_of(DIMENSIONS)
AGENT_MASKS = [mask for mask in MASKS if "agent_id" in mask_columns(mask)]
AGENT_MASK = mask_of(["agent_id"])  # rows grouped by agent alone
SINGLE_DIMENSION_MASKS = {mask_of([column]): column for column in DIMENSIONS}

# ---- histogram grid: bin b holds the values in [b / BIN_SCALE, (b + 1) / BIN_SCALE)
BIN_SCALE = 20
BIN_WIDTH = 1 / BIN_SCALE
METRIC_CLAMP = 1e12  # metric values are clamped so a bin always fits a bigint
CONFIDENCE_METRIC = ""  # the histogram "metric" that is the node confidence
REASON_LENGTH = 200  # fuse reasons are grouped on their first 200 characters
# What a fuse decision's reason is grouped by: its reason code where one was
# sent, else its text (the contract: "Fuse reasons are grouped by reason_code
# where one is given").
REASON_KEY = f"CASE WHEN f.reason_code <> '' THEN f.reason_code ELSE left(f.reason, {REASON_LENGTH}) END"


def reason_key(reason_code: str, reason: str) -> str:
    """REASON_KEY in Python (the SQLite path)."""
    return reason_code or reason[:REASON_LENGTH]


# An entry of Node.metrics is a metric value when it is a finite JSON number
# (not a boolean: Python's True is an int); the SQL form is PostgreSQL's, and
# JSON has no NaN or infinity.
METRIC_VALUE_SQL = "jsonb_typeof({value}) = 'number'"


def bin_of(value: float) -> int:
    return math.floor(max(-METRIC_CLAMP, min(METRIC_CLAMP, value)) * BIN_SCALE)


def bin_start(bin_: int) -> float:
    return round(bin_ * BIN_WIDTH, 10)


# ---- SQL fragments shared by the refresh job and the read paths

def review_target_sql(review: str, up_to: str = "") -> str:
    """The node a review judges (see metrics.counts.judged_reviews): the named
    product, else the trace's final answer (provenance.vocabulary's rule).
    `review` is the review's alias; `up_to`, when given, the SQL of the
    largest node id to consider (the refresh's mark)."""
    limit = f"AND t.id <= {up_to}" if up_to else ""
    return f"""
    CASE WHEN {review}.product_id <> '' THEN
        (SELECT t.id FROM {NODE} t WHERE t.project_id = {review}.project_id
            AND t.product_id = {review}.product_id {limit})
    ELSE {final_answer_sql(f"{review}.trace_id", f"{review}.project_id", f"fa.id <= {up_to}" if up_to else "")}
    END
"""


def histogram_values_sql(where: str) -> str:
    """(project_id, timestamp, dimensions…, metric, x): every value a node of
    `where` contributes to the histograms, its confidence and each numeric
    entry of its metrics (clamped). PostgreSQL."""
    return f"""
    SELECT n.project_id, n.timestamp, n.agent_id, n.step, n.source_type, n.round, '{CONFIDENCE_METRIC}' AS metric,
           n.confidence AS x
    FROM {NODE} n WHERE {where} AND n.confidence IS NOT NULL
    UNION ALL
    SELECT n.project_id, n.timestamp, n.agent_id, n.step, n.source_type, n.round, kv.key,
           GREATEST(LEAST(kv.value::numeric, {METRIC_CLAMP}), -{METRIC_CLAMP})::float8 AS x
    FROM {NODE} n CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(n.metrics) = 'object'
                                                     THEN n.metrics ELSE '{{}}'::jsonb END) AS kv
    WHERE {where} AND {METRIC_VALUE_SQL.format(value="kv.value")}
"""


def bin_sql(value: str) -> str:
    return f"floor({value} * {BIN_SCALE})::bigint"


# Every fuse decision with the node it judges, by the node's hour and dimensions.
FUSE_REASON_PAIRS = f"""
    SELECT n.project_id, date_trunc('hour', n.timestamp, 'UTC') AS hour, n.agent_id, n.step, n.source_type, n.round,
           f.decision, {REASON_KEY} AS reason
    FROM {FUSE} f JOIN {NODE} n ON n.project_id = f.project_id AND n.product_id = f.product_id
"""

# Every escalation with the node it names (the node may arrive later), by the
# escalation's hour and the node's dimensions.
ESCALATION_NODE_PAIRS = f"""
    SELECT e.project_id, date_trunc('hour', e.timestamp, 'UTC') AS hour, n.agent_id, n.step, n.source_type, n.round
    FROM {ESCALATION} e JOIN {NODE} n ON n.project_id = e.project_id AND n.product_id = e.product_id
"""

# What followed for a fuse decision's trace (metrics.counts.policy_versions):
# whether it was reviewed, whether its newest review (by timestamp, then id)
# says incorrect, and its escalations.
def trace_outcome_sql(trace: str, review_limit: str = "", escalation_limit: str = "") -> tuple[str, str]:
    """(a join to add after the trace table aliased `trace`, the columns
    reviewed, incorrect, escalations it gives); the limits are extra
    conditions on the reviews (r) and escalations (e) read."""
    join = f"""
        LEFT JOIN LATERAL (SELECT r.verdict FROM {REVIEW} r WHERE r.trace_id = {trace}.id
            AND r.project_id = {trace}.project_id {review_limit} ORDER BY r.timestamp DESC, r.id DESC LIMIT 1) v ON true
        LEFT JOIN LATERAL (SELECT COUNT(*)::int AS n FROM {ESCALATION} e WHERE e.trace_id = {trace}.id
            AND e.project_id = {trace}.project_id {escalation_limit}) esc ON true
    """
    columns = (f"v.verdict IS NOT NULL AS reviewed, COALESCE(v.verdict = '{ReviewVerdict.INCORRECT.value}', false) AS incorrect, "
               "COALESCE(esc.n, 0) AS escalations")
    return join, columns
