"""The values the filter selects offer: every agent, step, source type and
round the project has used."""

from django.db import connection

from metrics.additive import watermark
from metrics.models import DayHistogram, HourRollup
from provenance.bulk import is_postgres
from provenance.models import Node

FILTERS = ("agent_id", "step", "source_type", "round")


def filter_options(project) -> dict[str, list]:
    found = {column: set() for column in FILTERS}
    if is_postgres():
        # Single-dimension rollup rows name every value cheaply; nodes newer than the watermark add the rest.
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT DISTINCT mask, agent_id, step, source_type, round FROM {HourRollup._meta.db_table} "
                f"WHERE project_id = %s AND mask IN (1, 2, 4, 8)",
                [project.pk],
            )
            for mask, *values in cursor.fetchall():
                column = FILTERS[mask.bit_length() - 1]
                found[column].add(values[FILTERS.index(column)])
        recent = Node.objects.filter(project=project, pk__gt=watermark()[0])
    else:
        recent = Node.objects.filter(project=project)
    for column in FILTERS:
        found[column].update(recent.order_by().values_list(column, flat=True).distinct())
    options = {column: sorted(v for v in values if v not in (None, "")) for column, values in found.items()}
    options["metric"] = metric_names(project)
    return options


def metric_names(project) -> list[str]:
    """The names reported in Node.metrics (from the histogram rollup; the raw
    scan only where there are no rollups)."""
    if is_postgres():
        names = DayHistogram.objects.filter(project=project).exclude(metric="").values_list("metric", flat=True)
        return sorted(set(names.order_by().distinct()))
    names = set()
    for reported in Node.objects.filter(project=project).values_list("metrics", flat=True).iterator():
        if isinstance(reported, dict):
            names.update(name for name, value in reported.items() if isinstance(value, (int, float)))
    return sorted(names)
