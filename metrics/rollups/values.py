"""The values whose distributions the statistics rollup (metrics.models.DayStat)
keeps, and the fine grid it keeps them on, defined once in their SQL and
Python forms.

Values: a node's confidence (metric ""), each numeric entry of its `metrics`
object (by key), and the fields of the price of certainty under names of
their own ("@duration_ms", "@tokens", "@cost_usd": a `metrics` key may be
called "tokens" too), and "@unpriced": 1 for a node that has token usage
and no cost (what the Cost & latency page counts by model, read from the
rollup, not by scanning the window's nodes; one value, so one bin a group). A node without a value
contributes nothing to it.

The grid is fine enough that a percentile read from it is within 1% of the
nearest-rank value (and within 0.001 for values in [0, 1]): bin edges grow by
2% away from zero (below 1e-9 everything is bin 0), except on [0.1, 1), cut
in steps of 0.002. Each bin row also keeps its count, sums of the first four
powers, minimum and maximum, so count, mean, deviation, skewness and
kurtosis come out exact, and a percentile is the middle of its bin's smallest
and largest value: less than half a bin from the nearest-rank value (under
1%, or under 0.001), and exact when they are all equal, as integer counts are.
"""

import math

from django.db.models import OuterRef, Q, Subquery

from core.numbers import is_finite_number
from metrics.filter_match import lookups
from metrics.rollups.schema import (
    CONFIDENCE_METRIC,
    DIMENSIONS,
    METRIC_CLAMP,
    METRIC_VALUE_SQL,
    NODE,
    PLACEHOLDERS,
    TRACE,
)
from provenance.models import DEFAULT_ENVIRONMENT, Trace
from tenancy.colocation import in_outer_project

# The stored metric names of the node fields, and the API's names for them.
DURATION, TOKENS, COST = "@duration_ms", "@tokens", "@cost_usd"
UNPRICED = "@unpriced"  # no API name: only the Cost & latency page reads it
FIELD_METRICS = {"confidence": CONFIDENCE_METRIC, "duration_ms": DURATION, "tokens": TOKENS, "cost_usd": COST}


def stored_metric(name: str) -> str:
    """The stored name of an API metric name (a field, else a key of `metrics`)."""
    return FIELD_METRICS.get(name, name)


# ---- the grid: bin 0 is |x| < TINY; bins 1..LOW_BINS grow by RATIO up to 0.1;
# then LINEAR_BINS bins of 0.002 up to 1; then bins growing by RATIO. Negative
# values take the negated bin of their magnitude.
TINY = 1e-9
RATIO = 1.02
LOG_RATIO = math.log(RATIO)
LOW_BINS = math.ceil(math.log(0.1 / TINY) / LOG_RATIO)
LINEAR_START = LOW_BINS + 1
LINEAR_PER_UNIT = 500  # bins per unit on [0.1, 1): steps of 0.002
LINEAR_BINS = 450
HIGH_START = LINEAR_START + LINEAR_BINS


def fine_bin(x: float) -> int:
    a = abs(x)
    if a < TINY:
        return 0
    if a < 0.1:
        k = min(LOW_BINS, 1 + math.floor(math.log(a / TINY) / LOG_RATIO))
    elif a < 1:
        k = LINEAR_START + min(LINEAR_BINS - 1, math.floor((a - 0.1) * LINEAR_PER_UNIT))
    else:
        k = HIGH_START + math.floor(math.log(a) / LOG_RATIO)
    return k if x > 0 else -k


def fine_bin_sql(x: str) -> str:
    """fine_bin in PostgreSQL (the same float8 operations, so the same bins)."""
    a = f"abs({x})"
    magnitude = f"""CASE WHEN {a} < {TINY!r}::float8 THEN 0
        WHEN {a} < 0.1::float8 THEN LEAST({LOW_BINS}, 1 + floor(ln({a} / {TINY!r}::float8) / {LOG_RATIO!r}::float8))
        WHEN {a} < 1 THEN {LINEAR_START} + LEAST({LINEAR_BINS - 1}, floor(({a} - 0.1::float8) * {LINEAR_PER_UNIT}::float8))
        ELSE {HIGH_START} + floor(ln({a}) / {LOG_RATIO!r}::float8) END"""
    return f"(sign({x}) * ({magnitude}))::bigint"


# ---- which values a node contributes
# The node fields' SQL, over the node table aliased `n`: tokens are input plus
# output, for a node that has either.
TOKENS_SQL = ("CASE WHEN n.input_tokens IS NOT NULL OR n.output_tokens IS NOT NULL "
              "THEN COALESCE(n.input_tokens, 0)::bigint + COALESCE(n.output_tokens, 0) END")
FIELD_SQL = {
    DURATION: "n.duration_ms",
    TOKENS: TOKENS_SQL,
    COST: "n.cost_usd",
    UNPRICED: f"CASE WHEN n.cost_usd IS NULL AND ({TOKENS_SQL}) IS NOT NULL THEN 1 END",
}
# The node's model and its trace's environment, as the rollup keys them.
MODEL_SQL = "n.model"
ENVIRONMENT_SQL = "t_env.environment"
ENVIRONMENT_JOIN = f"JOIN {TRACE} t_env ON t_env.id = n.trace_id"  # what ENVIRONMENT_SQL needs after `{NODE} n`


def in_environment_sql(trace_pk: str, environment: str, project_pk: int | None = None,
                       by: str = "id") -> tuple[str, list]:
    """`trace_pk` (a trace's id column; with `by="trace_id"`, its key, as a
    fuse decision names it: a key no trace holds yet is production's, as its
    trace will be) is a trace of `environment`. Production is "not one of the
    other environments' traces", a short list the trace index on (project,
    environment) finds when `project_pk` (a project's id, never a column: the
    list is read once, not per row) is given. Another environment is the
    row's own trace's, looked up by key: `trace_pk` is then qualified by its
    table (`n.trace_id`), whose project_id the lookup equals."""
    scope = f"project_id = {int(project_pk)} AND " if project_pk is not None else ""
    if environment == DEFAULT_ENVIRONMENT:
        return (f"{trace_pk} NOT IN (SELECT {by} FROM {TRACE} WHERE {scope}(environment < %s OR environment > %s))",
                [environment, environment])
    # Each row's trace looked up by its key, in the row's project. A list of the environment's traces
    # (IN) would be planned as a join, which a planner without statistics for a young project's rows
    # runs as a loop over the whole list for every row.
    owner, _, _ = trace_pk.rpartition(".")
    if not owner:
        raise ValueError(f"{trace_pk!r}: name the column with its table, the lookup is inside another")
    return (f"(SELECT environment FROM {TRACE} WHERE {scope}project_id = {owner}.project_id "
            f"AND {by} = {trace_pk}) = %s", [environment])


# ---- dimensions: rows are keyed by environment always, and grouped by none or
# one of STAT_DIMENSIONS (`mask`, as metrics.rollups.schema's). Rows by every
# dimension at once would be a row per bin per combination: ten times the
# others together at 1,000,000 nodes; questions naming two are read raw.
STAT_DIMENSIONS = (*DIMENSIONS, "model")
STAT_PLACEHOLDERS = {**PLACEHOLDERS, "model": "''::varchar"}
STAT_MASKS = {0: (), **{1 << i: (column,) for i, column in enumerate(STAT_DIMENSIONS)}}


def stat_mask(columns) -> int | None:
    """The mask of the rows that answer a question filtered or split by these
    dimensions (None: two or more, which no row answers)."""
    columns = set(columns)
    if len(columns) > 1:
        return None
    return sum(1 << STAT_DIMENSIONS.index(column) for column in columns)


def stat_values_sql(where: str, only: tuple[str, ...] | None = None, only_param: str = "",
                    environment: str | None = None) -> str:
    """(project_id, timestamp, environment, agent_id, step, source_type, round,
    model, metric, x): every value a node of `where` contributes, or only
    those of the stored metrics `only` (`only_param`: the SQL parameter
    holding them as an array; a `metrics` key is then looked up, not every
    key listed). `environment`: an SQL value all of `where`'s nodes are known
    to be in (a read that filters on it), sparing the join to their traces. PostgreSQL."""
    environment_sql, source = (environment, f"{NODE} n") if environment else (
        ENVIRONMENT_SQL, f"{NODE} n {ENVIRONMENT_JOIN}")
    keys = f"n.project_id, n.timestamp, {environment_sql} AS environment, n.agent_id, n.step, n.source_type, " \
           f"n.round, {MODEL_SQL} AS model"
    parts = []
    if only is None or CONFIDENCE_METRIC in only:
        parts.append(f"SELECT {keys}, '{CONFIDENCE_METRIC}'::varchar AS metric, n.confidence AS x FROM {source} "
                     f"WHERE {where} AND n.confidence IS NOT NULL")
    clamped = f"GREATEST(LEAST(kv.value::numeric, {METRIC_CLAMP}), -{METRIC_CLAMP})::float8 AS x"
    if only is None:
        parts.append(f"""SELECT {keys}, kv.key::varchar AS metric, {clamped}
        FROM {source} CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(n.metrics) = 'object'
                                                         THEN n.metrics ELSE '{{}}'::jsonb END) AS kv
        WHERE {where} AND {METRIC_VALUE_SQL.format(value="kv.value")}""")
    elif any(m != CONFIDENCE_METRIC and m not in FIELD_SQL for m in only):
        parts.append(f"""SELECT {keys}, kv.key::varchar AS metric, {clamped}
        FROM {source} CROSS JOIN LATERAL (SELECT k AS key, n.metrics -> k AS value
                                          FROM unnest({only_param}::text[]) AS k) AS kv
        WHERE {where} AND jsonb_typeof(n.metrics) = 'object' AND {METRIC_VALUE_SQL.format(value="kv.value")}""")
    fields = [(metric, sql) for metric, sql in FIELD_SQL.items() if only is None or metric in only]
    if fields:
        # One pass over the nodes for every field asked, not one per field.
        values = ", ".join(f"('{metric}'::varchar, ({sql})::float8)" for metric, sql in fields)
        parts.append(f"SELECT {keys}, f.metric, f.x FROM {source} CROSS JOIN LATERAL (VALUES {values}) AS f(metric, x) "
                     f"WHERE {where} AND f.x IS NOT NULL")
    if not parts:  # only fields not stored yet
        parts.append(f"SELECT {keys}, ''::varchar AS metric, NULL::float8 AS x FROM {source} WHERE false")
    return "\nUNION ALL\n".join(parts)


def node_values(confidence, reported, fields: dict | None = None) -> list[tuple[str, float]]:
    """stat_values_sql in Python (the SQLite path): (metric, x) of one node."""
    values = [(CONFIDENCE_METRIC, float(confidence))] if confidence is not None else []
    if isinstance(reported, dict):
        values += [(name, float(max(-METRIC_CLAMP, min(METRIC_CLAMP, x))))
                   for name, x in reported.items() if is_finite_number(x)]
    for metric, x in (fields or {}).items():
        if x is not None:
            values.append((metric, float(x)))
    return values


# The same for the ORM (the SQLite path): the node columns to read, and what they give.
ORM_COLUMNS = ("duration_ms", "input_tokens", "output_tokens", "cost_usd", "model")


def orm_fields(row: dict) -> dict:
    """{stored metric: value} of a node's fields, from a .values() row of ORM_COLUMNS."""
    tokens_in, tokens_out = row["input_tokens"], row["output_tokens"]
    tokens = None if tokens_in is None and tokens_out is None else (tokens_in or 0) + (tokens_out or 0)
    return {DURATION: row["duration_ms"], TOKENS: tokens, COST: row["cost_usd"],
            UNPRICED: 1 if row["cost_usd"] is None and tokens is not None else None}


def orm_model(row: dict) -> str:
    return row["model"]


def orm_narrow(nodes, filters, project):
    """`nodes` (of `project`) narrowed to the filters' model and environment,
    by in_environment_sql's rule. Not a join to the trace table: before a
    young project's rows have statistics, a planner expecting one node loops
    over every trace of the environment for each node (an Overview of
    240,000 unanalyzed nodes took 510 s that way, 0.86 s this way)."""
    if filters.model:
        nodes = nodes.filter(**lookups({"model": filters.model}))
    traces = Trace.objects.filter(project=project)
    if filters.environment == DEFAULT_ENVIRONMENT:
        others = traces.filter(Q(environment__lt=DEFAULT_ENVIRONMENT) | Q(environment__gt=DEFAULT_ENVIRONMENT))
        return nodes.exclude(trace_id__in=others.values("id"))
    environment = traces.filter(in_outer_project(pk=OuterRef("trace_id"))).values("environment")
    return nodes.alias(trace_environment=Subquery(environment)).filter(trace_environment=filters.environment)


# The per-bin figures, as SQL aggregates over x (in this order everywhere).
FIGURES = ("n", "total", "total_sq", "total_cube", "total_quad", "minimum", "maximum", "fractional")
AGGREGATES_SQL = ("COUNT(*)::bigint AS n, SUM(x) AS total, SUM(x * x) AS total_sq, SUM(x * x * x) AS total_cube, "
                  "SUM(x * x * x * x) AS total_quad, MIN(x) AS minimum, MAX(x) AS maximum, "
                  "COUNT(*) FILTER (WHERE x <> floor(x))::bigint AS fractional")
# How two rows of the same bin combine (upserts and reads).
COMBINE_SQL = {"n": "SUM", "total": "SUM", "total_sq": "SUM", "total_cube": "SUM", "total_quad": "SUM",
               "minimum": "MIN", "maximum": "MAX", "fractional": "SUM"}
