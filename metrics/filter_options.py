"""The values the filters offer: every agent, step, source type, round,
model and environment the project has used, and the span of time its data covers."""

from django.db.models import Max, Min

from core.dialect import is_postgres
from core.numbers import is_finite_number
from core.replica import reading_connection
from metrics.models import DayHistogram, DayStat, HourRollup
from metrics.rollups.schema import DIMENSIONS, SINGLE_DIMENSION_MASKS
from metrics.rollups.values import TOKENS, stat_mask
from metrics.rollups.watermark import read_marks
from provenance.models import DEFAULT_ENVIRONMENT, Node, Trace


def filter_options(project) -> dict[str, list]:
    found = {column: set() for column in DIMENSIONS}
    if is_postgres():
        # Single-dimension rollup rows name every value cheaply; nodes newer than the watermark add the rest.
        with reading_connection().cursor() as cursor:
            cursor.execute(
                f"SELECT DISTINCT mask, agent_id, step, source_type, round FROM {HourRollup._meta.db_table} "
                f"WHERE project_id = %s AND mask IN ({', '.join(map(str, SINGLE_DIMENSION_MASKS))})",
                [project.pk],
            )
            for mask, *values in cursor.fetchall():
                column = SINGLE_DIMENSION_MASKS[mask]
                found[column].add(values[DIMENSIONS.index(column)])
        recent = Node.objects.filter(project=project, pk__gt=read_marks().node)
    else:
        recent = Node.objects.filter(project=project)
    for column in DIMENSIONS:
        found[column].update(recent.order_by().values_list(column, flat=True).distinct())
    options = {column: sorted(v for v in values if v not in (None, "")) for column, values in found.items()}
    options["metric"] = metric_names(project)
    options["environment"] = environments(project)
    options["model"] = models(project, recent, options["environment"])
    return options


def models(project, recent, environments: list[str]) -> list[str]:
    """Every model named, from the statistics rollup's model rows and the nodes after them."""
    found = set(recent.order_by().values_list("model", flat=True).distinct())
    if is_postgres():
        # The key's index leads with environment, mask and metric: naming them finds the rows of
        # models that reported token usage (the ones a price applies to) without reading the others.
        rows = DayStat.objects.filter(project=project, environment__in=environments, mask=stat_mask(["model"]),
                                      metric=TOKENS)
        found.update(rows.order_by()
                     .values_list("model", flat=True).distinct())
    return sorted(found - {""})


def environments(project) -> list[str]:
    """production first (the default), then every other environment the project's traces name."""
    others = Trace.objects.filter(project=project).exclude(environment=DEFAULT_ENVIRONMENT).order_by()
    return [DEFAULT_ENVIRONMENT, *sorted(set(others.values_list("environment", flat=True).distinct()))]


def metric_names(project) -> list[str]:
    """The names reported in Node.metrics (from the histogram rollup; the raw
    scan only where there are no rollups)."""
    if is_postgres():
        names = DayHistogram.objects.filter(project=project).exclude(metric="").values_list("metric", flat=True)
        return sorted(set(names.order_by().distinct()))
    names = set()
    for reported in Node.objects.filter(project=project).values_list("metrics", flat=True).iterator():
        if isinstance(reported, dict):
            names.update(name for name, value in reported.items() if is_finite_number(value))
    return sorted(names)


def data_extent(project) -> tuple | None:
    """(oldest, newest) node timestamp, None without nodes: what the default range is fitted to."""
    found = Node.objects.filter(project=project).aggregate(oldest=Min("timestamp"), newest=Max("timestamp"))
    return (found["oldest"], found["newest"]) if found["oldest"] else None
