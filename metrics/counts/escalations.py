"""Escalations in a window (escalation_rate's numerator): with filters, those
naming a node that matches them (wherever the node's own timestamp lies),
without, all of them. Whole hours come from metrics.models.HourEscalation plus
what the last refresh has not seen; the partial hours at the ends are counted
raw (metrics.counts.split), as are all hours on other databases."""

from core.dialect import is_postgres
from metrics.counts.split import split
from metrics.filter_match import lookups
from metrics.models import HourEscalation
from metrics.questions import Filters
from metrics.rollups.schema import ESCALATION, ESCALATION_NODE_PAIRS, EVERY_DIMENSION, NO_DIMENSIONS
from metrics.rollups.snapshot import one_snapshot
from metrics.rollups.sql import fetch, filters_sql, intervals_sql, node_filters_sql
from metrics.rollups.values import in_environment_sql, orm_narrow
from metrics.rollups.watermark import read_marks
from provenance.models import Escalation, Node
from tenancy.colocation import same_project


def count(project, start, end, filters: Filters = Filters(), use_rollups: bool = True) -> int:
    if not is_postgres():
        return orm_count(project, start, end, filters)
    with one_snapshot():
        hours = split(start, end, "hour")
        total = 0
        if use_rollups and hours.whole and filters.in_hour_rollups:
            marks = read_marks()
            total += rolled(project, hours.whole, filters)
            # What the rollup has not seen: new escalations, and old ones naming new nodes.
            total += raw(project, [hours.whole], filters, f"e.id > {int(marks.escalation)}")
            if filters.dimensions:
                total += raw(project, [hours.whole], filters,
                             f"n.id > {int(marks.node)} AND e.id <= {int(marks.escalation)}")
            partial = hours.partial
        else:
            partial = [(start, end)] if start < end else []
        if partial:
            total += raw(project, partial, filters)
    return total


def rolled(project, hours: tuple, filters: Filters) -> int:
    conditions, params = filters_sql(filters.dimensions)
    mask = EVERY_DIMENSION if filters.dimensions else NO_DIMENSIONS
    [(n,)] = fetch(
        f"SELECT COALESCE(SUM(n), 0)::bigint FROM {HourEscalation._meta.db_table} "
        f"WHERE project_id = %s AND mask = %s AND hour >= %s AND hour < %s AND {conditions}",
        [project.pk, mask, *hours, *params],
    )
    return n


def raw(project, intervals: list[tuple], filters: Filters, extra: str = "TRUE") -> int:
    times, time_params = intervals_sql("e.timestamp", intervals)
    if filters.dimensions or filters.model:
        conditions, params = node_filters_sql(project, filters)
        sql = f"SELECT COUNT(*) FROM ({ESCALATION_NODE_PAIRS} WHERE e.project_id = %s AND {times} AND {conditions} AND {extra}) AS pairs"
    else:
        conditions, params = in_environment_sql("e.trace_id", filters.environment, project.pk)
        sql = f"SELECT COUNT(*) FROM {ESCALATION} e WHERE e.project_id = %s AND {times} AND {conditions} AND {extra}"
    [(n,)] = fetch(sql, [project.pk, *time_params, *params])
    return n


def orm_count(project, start, end, filters: Filters) -> int:
    escalations = Escalation.objects.filter(same_project("trace"), project=project, timestamp__gte=start,
                                            timestamp__lt=end, trace__environment=filters.environment)
    if filters.dimensions or filters.model:
        matching = orm_narrow(Node.objects.filter(project=project, **lookups(filters.dimensions)), filters, project).values("product_id")
        escalations = escalations.filter(product_id__in=matching)
    return escalations.count()
