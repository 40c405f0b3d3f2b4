"""Running the check: one report per project and run, the history kept.

`check_project` runs it now (the `check_dag_health` command runs it for every
project). `check_due` is what the schedule runs (see `schedule.py`): a
redelivered or doubled message checks nothing twice, because the due test is
repeated under a per-project lock.
"""

from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count
from django.utils import timezone

from core.dialect import is_postgres
from provenance.health import faults, round_limit
from provenance.health.schedule import due_projects, last_scheduled_run
from provenance.models import FindingKind, HealthFinding, HealthReport, Node

# Namespace of the PostgreSQL advisory lock that serializes runs per project.
from tenancy.models import Project

LOCK_NAMESPACE = 0x4845414C


def check_project(project: Project, now: datetime | None = None) -> HealthReport:
    with transaction.atomic():
        _lock(project)
        return _run(project, now or timezone.now())


def check_all(now: datetime | None = None) -> list[HealthReport]:
    now = now or timezone.now()
    return [check_project(project, now) for project in Project.objects.order_by("pk")]


def check_due(now: datetime | None = None) -> list[HealthReport]:
    now = now or timezone.now()
    since = last_scheduled_run(now)
    reports = []
    for project in due_projects(since, now):
        with transaction.atomic():
            _lock(project)
            if due_projects(since, now).filter(pk=project.pk).exists():
                reports.append(_run(project, now))
    return reports


def _run(project: Project, now: datetime) -> HealthReport:
    report = HealthReport.objects.create(project=project, checked_at=now, started_at=timezone.now())
    faults.find_all(report.pk, project.pk, now, settings.HEALTH_BROKEN_LINK_GRACE_SECONDS,
                    round_limit.round_limit(project.pk))
    found = dict(
        HealthFinding.objects.filter(report=report).order_by().values_list("kind").annotate(n=Count("pk"))
    )
    report.counts = {kind: found.get(kind, 0) for kind in FindingKind.values}
    report.finding_count = sum(found.values())
    report.node_count = Node.objects.filter(project=project).count()
    report.finished_at = timezone.now()
    report.save(update_fields=["counts", "finding_count", "node_count", "finished_at"])
    return report


def _lock(project: Project) -> None:
    """Serializes runs over one project until the transaction ends (SQLite
    serializes writers by itself)."""
    if is_postgres():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [LOCK_NAMESPACE, project.pk % 2**31])
