"""Distributions of node confidence and of every numeric entry of Node.metrics,
as counts on a fixed grid (metrics.rollups.schema: bin b holds the values in
[b * 0.05, (b + 1) * 0.05)). A fixed grid adds up across days and groups, so
the day rollups and the raw rows combine exactly. Metric "" is the node confidence."""

from collections import defaultdict

from core.dialect import is_postgres
from core.numbers import is_finite_number
from metrics.counts.split import split
from metrics.filter_match import lookups
from metrics.models import DayHistogram
from metrics.questions import Question, bucket_floor
from metrics.rollups.schema import CONFIDENCE_METRIC, bin_of, bin_sql, histogram_values_sql
from metrics.rollups.snapshot import one_snapshot
from metrics.rollups.sql import bucket_sql, fetch, filters_sql, intervals_sql, node_filters_sql
from metrics.rollups.values import orm_narrow
from metrics.rollups.watermark import read_marks
from provenance.models import Node


def counts(project, question: Question, metric: str | None = None, use_rollups: bool = True) -> dict:
    """{(bucket start, `by` value or None, metric): {bin: count}} for the nodes
    in the window that match the filters; `metric` limits it to one metric.
    Steps: "" (the whole window), "day" or "hour" (hours are always scanned raw)."""
    if not is_postgres():
        return python_counts(project, question, metric)
    with one_snapshot():
        found: dict = defaultdict(lambda: defaultdict(int))
        days = split(question.start, question.end, "day")
        if use_rollups and question.step != "hour" and days.whole and question.filters.in_hour_rollups:
            node_mark = read_marks().node
            add_rows(found, question, rolled_rows(project, question, metric, days.whole))
            add_rows(found, question, raw_rows(project, question, metric, [days.whole], f"n.id > {int(node_mark)}"))
            partial = days.partial
        else:
            partial = [(question.start, question.end)]
        if partial:
            add_rows(found, question, raw_rows(project, question, metric, partial))
        return {key: dict(bins) for key, bins in found.items()}


def add_rows(found: dict, question: Question, rows) -> None:
    for bucket, value, metric, bin_, n in rows:
        start = question.bucket_key(bucket)
        found[(start, value, metric)][bin_] += n


def rolled_rows(project, question, metric, days):
    filters, params = filters_sql(question.filters.dimensions)
    by = question.by or "NULL"
    only = " AND metric = %s" if metric is not None else ""
    return fetch(
        f"SELECT {bucket_sql(question.step, 'day')}, {by}, metric, bin, SUM(n)::bigint "
        f"FROM {DayHistogram._meta.db_table} WHERE project_id = %s AND day >= %s AND day < %s AND {filters}{only} "
        f"GROUP BY 1, 2, 3, 4",
        [project.pk, *days, *params, *([metric] if metric is not None else [])],
    )


def raw_rows(project, question, metric, intervals, extra: str = "TRUE"):
    filters, params = node_filters_sql(project, question.filters)
    times, time_params = intervals_sql("n.timestamp", intervals)
    where = f"n.project_id = %s AND {times} AND {filters} AND {extra}"
    where_params = [project.pk, *time_params, *params]
    by = question.by or "NULL"
    only = " WHERE metric = %s" if metric is not None else ""
    return fetch(
        f"SELECT {bucket_sql(question.step, 'timestamp')}, {by}, metric, {bin_sql('x')}, COUNT(*) "
        f"FROM ({histogram_values_sql(where)}) AS v{only} GROUP BY 1, 2, 3, 4",
        [*where_params, *where_params, *([metric] if metric is not None else [])],
    )


def python_counts(project, question: Question, metric: str | None) -> dict:
    """The portable path (the embedded SQLite default): bins computed here."""
    found: dict = defaultdict(lambda: defaultdict(int))
    nodes = orm_narrow(Node.objects.filter(project=project, timestamp__gte=question.start, timestamp__lt=question.end,
                                           **lookups(question.filters.dimensions)), question.filters, project)
    columns = ["timestamp", "confidence", "metrics", *([question.by] if question.by else [])]
    for timestamp, confidence, reported, *value in nodes.values_list(*columns).iterator():
        start = question.bucket_key(bucket_floor(timestamp, question.step) if question.step else None)
        key = (start, value[0] if value else None)
        values = [(CONFIDENCE_METRIC, confidence)] if confidence is not None else []
        if isinstance(reported, dict):
            values += [(name, x) for name, x in reported.items() if is_finite_number(x)]
        for name, x in values:
            if metric is None or name == metric:
                found[(*key, name)][bin_of(float(x))] += 1
    return {key: dict(bins) for key, bins in found.items()}


def merged(found: dict) -> dict[str, dict[int, int]]:
    """Drops bucket and group: {metric: {bin: count}}."""
    total: dict = defaultdict(lambda: defaultdict(int))
    for (_, _, metric), bins in found.items():
        for bin_, n in bins.items():
            total[metric][bin_] += n
    return {metric: dict(bins) for metric, bins in total.items()}


