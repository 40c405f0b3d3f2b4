"""Fuse decisions about the nodes in a window, by decision and reason: the
reason code where one was sent, else the reason text cut to 200 characters
(metrics.rollups.schema.REASON_KEY, as in the rollup)."""

from collections import defaultdict

from core.dialect import is_postgres
from metrics.counts.split import split
from metrics.filter_match import lookups
from metrics.models import HourFuseReason
from metrics.questions import Question
from metrics.rollups.schema import FUSE_REASON_PAIRS, reason_key
from metrics.rollups.snapshot import one_snapshot
from metrics.rollups.sql import fetch, filters_sql, intervals_sql, node_filters_sql
from metrics.rollups.values import orm_narrow
from metrics.rollups.watermark import read_marks
from provenance.models import Fuse, Node


def counts(project, question: Question, use_rollups: bool = True) -> dict[tuple, int]:
    """{(`by` value or None, decision, reason): count}."""
    if not is_postgres():
        return python_counts(project, question)
    found: dict = defaultdict(int)
    with one_snapshot():
        hours = split(question.start, question.end, "hour")
        if use_rollups and hours.whole and question.filters.in_hour_rollups:
            marks = read_marks()
            node_mark, fuse_mark = marks.node, marks.fuse
            add(found, rolled_rows(project, question, hours.whole))
            # What the rollup has not seen: new decisions, and old decisions about new nodes
            # (two conditions rather than one OR, so each can use its primary key).
            add(found, raw_rows(project, question, [hours.whole], f"f.id > {int(fuse_mark)}"))
            add(found, raw_rows(project, question, [hours.whole], f"n.id > {int(node_mark)} AND f.id <= {int(fuse_mark)}"))
            partial = hours.partial
        else:
            partial = [(question.start, question.end)]
        if partial:
            add(found, raw_rows(project, question, partial))
    return dict(found)


def add(found: dict, rows) -> None:
    for value, decision, reason, n in rows:
        found[(value, decision, reason)] += n


def rolled_rows(project, question: Question, hours):
    filters, params = filters_sql(question.filters.dimensions)
    return fetch(
        f"SELECT {question.by or 'NULL'}, decision, reason, SUM(n)::bigint FROM {HourFuseReason._meta.db_table} "
        f"WHERE project_id = %s AND hour >= %s AND hour < %s AND {filters} GROUP BY 1, 2, 3",
        [project.pk, *hours, *params],
    )


def raw_rows(project, question: Question, intervals, extra: str = "TRUE"):
    filters, params = node_filters_sql(project, question.filters)
    times, time_params = intervals_sql("n.timestamp", intervals)
    return fetch(
        f"SELECT {question.by or 'NULL'}, decision, reason, COUNT(*) FROM ({FUSE_REASON_PAIRS} "
        f"WHERE n.project_id = %s AND {times} AND {filters} AND {extra}) AS pairs GROUP BY 1, 2, 3",
        [project.pk, *time_params, *params],
    )


def python_counts(project, question: Question) -> dict[tuple, int]:
    nodes = orm_narrow(Node.objects.filter(project=project, timestamp__gte=question.start, timestamp__lt=question.end,
                                           **lookups(question.filters.dimensions)), question.filters, project)
    by = {product: value for product, value in nodes.values_list("product_id", question.by or "project_id")}
    found: dict = defaultdict(int)
    fuses = Fuse.objects.filter(project=project, product_id__in=list(by)).values_list(
        "product_id", "decision", "reason_code", "reason")
    for product, decision, code, reason in fuses:
        found[(by[product] if question.by else None, decision, reason_key(code, reason))] += 1
    return dict(found)
