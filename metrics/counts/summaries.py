"""Distributions of the values metrics.rollups.values defines (confidence,
each `metrics` key, duration, tokens, cost) over a window, as
metrics.stats.summary.Distribution: the day statistics rollup for the whole
days inside the window (plus whatever arrived after the watermark), the
partial days at its ends scanned raw, each on the same fine grid, so the
two combine exactly. A question naming two or more dimensions (a filter and
a split) is scanned raw whole; on SQLite everything is read raw and binned here."""

from collections import defaultdict
from datetime import datetime

from core.dialect import is_postgres
from metrics.counts.split import split
from metrics.filter_match import lookups, value_param, value_sql
from metrics.models import WHOLE_BIN, DayStat
from metrics.questions import Filters, bucket_floor
from metrics.rollups.day_stats import binned_values_sql
from metrics.rollups.snapshot import one_snapshot
from metrics.rollups.sql import bucket_sql, fetch
from metrics.rollups.values import (
    COMBINE_SQL,
    FIGURES,
    MODEL_SQL,
    ORM_COLUMNS,
    STAT_DIMENSIONS,
    fine_bin,
    in_environment_sql,
    node_values,
    orm_fields,
    orm_model,
    orm_narrow,
    stat_mask,
)
from metrics.rollups.watermark import read_marks
from metrics.stats.summary import PERCENTILES, Distribution, Ranked
from provenance.models import Node

STEPS = ("", "day", "hour")


def stat_filters(filters: Filters) -> dict:
    """{dimension: value} of the set filters, over STAT_DIMENSIONS."""
    chosen = dict(filters.dimensions)
    if filters.model:
        chosen["model"] = filters.model
    return chosen


def distributions(project, start: datetime, end: datetime, filters: Filters = Filters(),
                  metric: str | tuple[str, ...] | None = None, step: str = "", by: str = "",
                  use_rollups: bool = True, binned: bool = True) -> dict:
    """{(bucket start, `by` value or None, stored metric): Distribution} of the
    nodes in [start, end) matching the filters (and their environment);
    `metric` (a stored name, metrics.rollups.values.stored_metric, or a tuple
    of them) limits it to those, read in one statement.
    Steps: "" (the whole window), "day" or "hour" (hours are always scanned raw).
    `binned=False` adds the bins up in the database: each Distribution has
    one bin, exact in its count, moments, extremes and whole-number test, but
    with no percentiles (a reader of shapes, not of ranks, needs no more)."""
    metric = checked(metric, step, by)
    key_of = lambda bucket: start if bucket is None else max(bucket, start)  # noqa: E731
    if not is_postgres():
        return python_distributions(project, start, end, filters, metric, step, by, key_of, binned)
    found: dict = defaultdict(Distribution)
    with one_snapshot():
        for sql, params in sources(project, start, end, filters, metric, step, by, use_rollups, binned):
            add_rows(found, fetch(sql, params), key_of)
    return dict(found)


def ranked(project, start: datetime, end: datetime, filters: Filters = Filters(),
           metric: str | tuple[str, ...] | None = None, step: str = "", by: str = "",
           use_rollups: bool = True, percents: tuple[int, ...] = PERCENTILES, pooled: list | None = None) -> dict:
    """{key as distributions' own: Ranked}: the same distributions' exact
    figures and their `percents` percentiles, ranked in the database on the
    same fine bins by the same rule (Distribution.percentile), so a chart of
    a few percentiles per bucket and group fetches one row per bucket and
    group, not every bin of them. `pooled` (values of `by`) ranks those
    groups merged into one, keyed by value None, and leaves the others out."""
    metric = checked(metric, step, by)
    if not is_postgres():
        found = distributions(project, start, end, filters, metric, step, by, use_rollups)
        if pooled is not None:
            found = pool(found, pooled)
        return {key: Ranked.of(distribution, percents) for key, distribution in found.items()}
    with one_snapshot():
        parts = sources(project, start, end, filters, metric, step, by, use_rollups)
        if not parts:
            return {}
        params = {"window_start": start, "pooled": [v for v in pooled or () if v is not None]}
        for _, part_params in parts:
            params.update(part_params)
        pooling = None if pooled is None else None in pooled
        rows = fetch(ranked_sql([sql for sql, _ in parts], percents, pooling), params)
    return {(bucket, value, name): Ranked.from_row(figures, percents)
            for bucket, value, name, *figures in rows}


def checked(metric, step: str, by: str) -> tuple[str, ...] | None:
    if step not in STEPS:
        raise ValueError(f"step must be one of {STEPS}")
    if by and by not in STAT_DIMENSIONS:
        raise ValueError(f"by must be one of {STAT_DIMENSIONS}")
    return (metric,) if isinstance(metric, str) else metric


def sources(project, start, end, filters, metric, step, by, use_rollups: bool = True,
            binned: bool = True) -> list[tuple[str, dict]]:
    """The statements (SQL, named parameters: they may run as one) whose rows
    (bucket, value, metric, bin, figures…) add up to the window's distributions:
    the rollup's whole days and the rows after its watermark, the partial
    days raw; or the whole window raw. Call inside one_snapshot()."""
    days = split(start, end, "day")
    partial = [(start, end)]
    mask = stat_mask([*stat_filters(filters), *([by] if by else [])])
    parts = []
    if use_rollups and step != "hour" and days.whole and mask is not None:
        node_mark = read_marks().node
        parts.append(rolled_rows(project, filters, metric, step, by, days.whole, mask, binned))
        parts.append(raw_rows(project, filters, metric, step, by, [days.whole], f"n.id > {int(node_mark)}", binned,
                              name="late"))
        partial = days.partial
    if partial:
        parts.append(raw_rows(project, filters, metric, step, by, partial, binned=binned))
    return parts


def pool(found: dict, pooled: list) -> dict:
    """The distributions of the `pooled` values merged per (bucket, metric), keyed by value None."""
    chosen = set(pooled)
    merged: dict = defaultdict(Distribution)
    for (bucket, value, name), distribution in found.items():
        if value in chosen:
            merged[(bucket, None, name)].merge(distribution)
    return dict(merged)


# Per (bucket, value, metric) bin, ordered by bin: the running count up to it and the group's whole count.
RUNNING_COUNTS_SQL = ("(SUM(n) OVER (PARTITION BY bucket, value, metric ORDER BY bin))::bigint AS below, "
                      "(SUM(n) OVER (PARTITION BY bucket, value, metric))::bigint AS whole")


def percentile_picks(percents: tuple[int, ...]) -> list[str]:
    """Each percentile (nearest rank) of rows carrying RUNNING_COUNTS_SQL,
    aggregated per group: the middle of the smallest and largest value of the
    one bin whose running count reaches the rank and whose predecessor's does
    not (no sort of the group's bins again)."""
    ranks = (f"GREATEST(1, ({int(p)} * whole + 99) / 100)" for p in percents)
    return [f"MAX((minimum + maximum) / 2) FILTER (WHERE below >= {rank} AND below - n < {rank})" for rank in ranks]


def ranked_sql(parts: list[str], percents: tuple[int, ...], pooling: bool | None = None) -> str:
    """The parts' bins added up per (bucket, value, metric, bin), keyed as
    distributions keys them (the first bucket starts with the window), then
    per (bucket, value, metric) the figures added up and each percentile
    (nearest rank) as the middle of the smallest and largest value of the
    first bin whose running count reaches the rank. With `pooling` (whether
    the pooled values include None), only the values in %(pooled)s, as one
    group of value NULL."""
    figures = ", ".join(FIGURES)
    combined = ", ".join(f"{COMBINE_SQL[name]}({name}) AS {name}" for name in FIGURES)
    picks = ", ".join(percentile_picks(percents))
    union = " UNION ALL ".join(f"({sql})" for sql in parts)
    value, where = "value", ""
    if pooling is not None:
        value = "NULL AS value"
        where = " WHERE value = ANY(%(pooled)s)" + (" OR value IS NULL" if pooling else "")
    return f"""
        WITH parts (bucket, value, metric, bin, {figures}) AS ({union}),
        bins AS (SELECT GREATEST(bucket, %(window_start)s) AS bucket, {value}, metric, bin, {combined}
                 FROM parts{where} GROUP BY 1, 2, 3, 4),
        running AS (SELECT *, {RUNNING_COUNTS_SQL} FROM bins)
        SELECT bucket, value, metric, {combined}, {picks} FROM running GROUP BY 1, 2, 3
    """


def add_rows(found: dict, rows, key_of) -> None:
    for bucket, value, metric, bin_, *figures in rows:
        found[(key_of(bucket), value, metric)].add(bin_, figures)


def rolled_rows(project, filters, metric, step, by, days, mask: int, binned: bool = True) -> tuple[str, dict]:
    chosen = stat_filters(filters)
    conditions = "".join(f" AND {value_sql(column, f'%(f_{column})s', value)}" for column, value in chosen.items())
    only = " AND metric = ANY(%(metric)s)" if metric is not None else ""
    combined = ", ".join(f"{COMBINE_SQL[name]}({name})" for name in FIGURES)
    # Unbinned, a group's day is its one row of bins added up; binned, its bins without that row.
    bins = f" AND bin {'<>' if binned else '='} {WHOLE_BIN}"
    sql = (f"SELECT {bucket_sql(step, 'day')}, {by or 'NULL'}, metric, {'bin' if binned else '0'}, {combined} "
           f"FROM {DayStat._meta.db_table} WHERE project_id = %(project)s AND environment = %(environment)s "
           f"AND mask = {int(mask)}{only} AND day >= %(day_from)s AND day < %(day_to)s{conditions}{bins} "
           f"GROUP BY 1, 2, 3, 4")
    params = {"project": project.pk, "environment": filters.environment, "day_from": days[0], "day_to": days[1],
              "metric": list(metric) if metric is not None else None,
              **{f"f_{column}": value_param(value) for column, value in chosen.items()}}
    return sql, params


def raw_rows(project, filters, metric, step, by, intervals, extra: str = "TRUE", binned: bool = True,
             name: str = "raw") -> tuple[str, dict]:
    """Named parameters: stat_values_sql repeats the condition in each of its
    parts; `name` keeps this statement's intervals apart from another's run beside it."""
    params = {"project": project.pk, "environment": filters.environment,
              "metric": list(metric) if metric is not None else None}
    where = raw_where(project, filters, intervals, params, extra, name)
    keys = [bucket_sql(step, "timestamp"), by or "NULL", "metric", "bin" if binned else "0"]
    return binned_values_sql(where, keys, metric, "%(metric)s", "%(environment)s"), params


def raw_where(project, filters, intervals, params: dict, extra: str = "TRUE", name: str = "raw") -> str:
    """The condition on nodes `n` in `intervals` matching the filters and
    `extra`; its named parameters added to `params` (%(project)s and
    %(environment)s the caller's)."""
    times = []
    for index, (low, high) in enumerate(intervals):
        params[f"{name}_from{index}"], params[f"{name}_to{index}"] = low, high
        times.append(f"(n.timestamp >= %({name}_from{index})s AND n.timestamp < %({name}_to{index})s)")
    conditions = ""
    for column, value in stat_filters(filters).items():
        params[f"f_{column}"] = value_param(value)
        conditions += f" AND {value_sql(MODEL_SQL if column == 'model' else 'n.' + column, f'%(f_{column})s', value)}"
    # The environment by metrics.rollups.values.in_environment_sql's rule, never a join to the traces.
    environment, environment_params = in_environment_sql("n.trace_id", filters.environment, project.pk)
    for index, value in enumerate(environment_params):
        params[f"e{index}"] = value
        environment = environment.replace("%s", f"%(e{index})s", 1)
    return f"n.project_id = %(project)s AND ({' OR '.join(times)}) AND {environment}{conditions} AND {extra}"


def python_distributions(project, start, end, filters, metric, step, by, key_of, binned: bool = True) -> dict:
    """The portable path (the embedded SQLite default): values binned here."""
    found: dict = defaultdict(Distribution)
    nodes = Node.objects.filter(project=project, timestamp__gte=start, timestamp__lt=end, **lookups(filters.dimensions))
    nodes = orm_narrow(nodes, filters, project)
    columns = ["timestamp", "confidence", "metrics", *ORM_COLUMNS, *([by] if by and by != "model" else [])]
    for row in nodes.values(*columns).iterator():
        bucket = key_of(bucket_floor(row["timestamp"], step) if step else None)
        value = (orm_model(row) if by == "model" else row[by]) if by else None
        for name, x in node_values(row["confidence"], row["metrics"], orm_fields(row)):
            if metric is None or name in metric:
                found[(bucket, value, name)].add_value(fine_bin(x) if binned else 0, x)
    return dict(found)
