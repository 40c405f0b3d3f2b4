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
from metrics.models import DayStat
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
from metrics.stats.summary import Distribution
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
    if step not in STEPS:
        raise ValueError(f"step must be one of {STEPS}")
    if by and by not in STAT_DIMENSIONS:
        raise ValueError(f"by must be one of {STAT_DIMENSIONS}")
    metric = (metric,) if isinstance(metric, str) else metric
    key_of = lambda bucket: start if bucket is None else max(bucket, start)  # noqa: E731
    found: dict = defaultdict(Distribution)
    if not is_postgres():
        return python_distributions(project, start, end, filters, metric, step, by, key_of, binned)
    with one_snapshot():
        days = split(start, end, "day")
        partial = [(start, end)]
        mask = stat_mask([*stat_filters(filters), *([by] if by else [])])
        if use_rollups and step != "hour" and days.whole and mask is not None:
            node_mark = read_marks().node
            rows = rolled_rows(project, filters, metric, step, by, days.whole, mask, binned)
            rows += raw_rows(project, filters, metric, step, by, [days.whole], f"n.id > {int(node_mark)}", binned)
            add_rows(found, rows, key_of)
            partial = days.partial
        if partial:
            add_rows(found, raw_rows(project, filters, metric, step, by, partial, binned=binned), key_of)
    return dict(found)


def add_rows(found: dict, rows, key_of) -> None:
    for bucket, value, metric, bin_, *figures in rows:
        found[(key_of(bucket), value, metric)].add(bin_, figures)


def rolled_rows(project, filters, metric, step, by, days, mask: int, binned: bool = True) -> list:
    chosen = stat_filters(filters)
    conditions = "".join(f" AND {column} = %s" for column in chosen)
    only = " AND metric = ANY(%s)" if metric is not None else ""
    combined = ", ".join(f"{COMBINE_SQL[name]}({name})" for name in FIGURES)
    return fetch(
        f"SELECT {bucket_sql(step, 'day')}, {by or 'NULL'}, metric, {'bin' if binned else '0'}, {combined} "
        f"FROM {DayStat._meta.db_table} WHERE project_id = %s AND environment = %s AND mask = %s{only}"
        f" AND day >= %s AND day < %s{conditions} GROUP BY 1, 2, 3, 4",
        [project.pk, filters.environment, mask,
         *([list(metric)] if metric is not None else []), *days, *chosen.values()],
    )


def raw_rows(project, filters, metric, step, by, intervals, extra: str = "TRUE", binned: bool = True) -> list:
    """Named parameters: stat_values_sql repeats the condition in each of its parts."""
    params = {"project": project.pk, "environment": filters.environment,
              "metric": list(metric) if metric is not None else None}
    times = []
    for index, (low, high) in enumerate(intervals):
        params[f"from{index}"], params[f"to{index}"] = low, high
        times.append(f"(n.timestamp >= %(from{index})s AND n.timestamp < %(to{index})s)")
    conditions = ""
    for column, value in stat_filters(filters).items():
        params[f"f_{column}"] = value
        conditions += f" AND {MODEL_SQL if column == 'model' else 'n.' + column} = %(f_{column})s"
    # The environment as the trace list's few other traces (metrics.rollups.values.in_environment_sql).
    environment, environment_params = in_environment_sql("n.trace_id", filters.environment, project.pk)
    for index, value in enumerate(environment_params):
        params[f"e{index}"] = value
        environment = environment.replace("%s", f"%(e{index})s", 1)
    where = f"n.project_id = %(project)s AND ({' OR '.join(times)}) AND {environment}{conditions} AND {extra}"
    keys = [bucket_sql(step, "timestamp"), by or "NULL", "metric", "bin" if binned else "0"]
    return fetch(binned_values_sql(where, keys, metric, "%(metric)s", "%(environment)s"), params)


def python_distributions(project, start, end, filters, metric, step, by, key_of, binned: bool = True) -> dict:
    """The portable path (the embedded SQLite default): values binned here."""
    found: dict = defaultdict(Distribution)
    nodes = Node.objects.filter(project=project, timestamp__gte=start, timestamp__lt=end, **filters.dimensions)
    nodes = orm_narrow(nodes, filters)
    columns = ["timestamp", "confidence", "metrics", *ORM_COLUMNS, *([by] if by and by != "model" else [])]
    for row in nodes.values(*columns).iterator():
        bucket = key_of(bucket_floor(row["timestamp"], step) if step else None)
        value = (orm_model(row) if by == "model" else row[by]) if by else None
        for name, x in node_values(row["confidence"], row["metrics"], orm_fields(row)):
            if metric is None or name in metric:
                found[(bucket, value, name)].add_value(fine_bin(x) if binned else 0, x)
    return dict(found)
