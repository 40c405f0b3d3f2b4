"""The DAG health check: one report per project and run, the history kept.

`check_project` runs the check now (the `check_dag_health` command runs it for
every project). `check_due` is what the schedule runs: it checks each project
that has no report since the last scheduled night (03:00 in the configured time
zone, read from the beat schedule). Beat sends it at 03:00 and again on a
15-minute tick, so a night missed while the scheduler was down is run once,
soon after it is back, and a redelivered or doubled message checks nothing
twice: the due test is repeated under a per-project lock.

What each finding kind means is documented in `provenance/dag_faults.py`.
"""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from celery.schedules import crontab
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count
from django.utils import timezone

from provenance import dag_faults, limits
from provenance.bulk import is_postgres
from provenance.models import FindingKind, HealthFinding, HealthReport, Node, Project

NIGHTLY_TASK = "provenance.tasks.check_dag_health"
DEFAULT_NIGHTLY = crontab(hour=3, minute=0)
# Namespace of the PostgreSQL advisory lock that serializes runs per project.
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


def due_projects(since: datetime, now: datetime):
    """Projects that existed at the last scheduled run and have no report
    checked between it and now."""
    checked = HealthReport.objects.filter(checked_at__gte=since, checked_at__lte=now).values("project_id")
    return Project.objects.filter(created_at__lte=since).exclude(pk__in=checked).order_by("pk")


def last_scheduled_run(now: datetime) -> datetime:
    """The newest instant at or before `now` that the nightly crontab names."""
    cron = _nightly_crontab()
    zone = ZoneInfo(settings.CELERY_TIMEZONE or settings.TIME_ZONE)
    local = now.astimezone(zone)
    for days_back in range(366):
        day = (local - timedelta(days=days_back)).date()
        if (day.month not in cron.month_of_year or day.day not in cron.day_of_month
                or day.isoweekday() % 7 not in cron.day_of_week):
            continue
        for hour in sorted(cron.hour, reverse=True):
            for minute in sorted(cron.minute, reverse=True):
                moment = datetime(day.year, day.month, day.day, hour, minute, tzinfo=zone)
                if moment <= local:
                    return moment
    raise ValueError("the nightly crontab names no instant in the past year")


def latest_report(project: Project | int) -> HealthReport | None:
    """The newest run's report (by when it ran, whatever its --now)."""
    return (
        HealthReport.objects.filter(project_id=getattr(project, "pk", project), finished_at__isnull=False)
        .order_by("-started_at", "-pk")
        .first()
    )


def latest_finding_count(project: Project | int) -> int:
    report = latest_report(project)
    return report.finding_count if report else 0


def nightly_trend(project: Project, nights: int = 60, now: datetime | None = None) -> list[dict]:
    """Findings per kind for each night, oldest first; a night's last run counts."""
    since = (now or timezone.now()) - timedelta(days=nights)
    per_night: dict[str, dict] = {}
    runs = (
        HealthReport.objects.filter(project=project, checked_at__gte=since, finished_at__isnull=False)
        .order_by("checked_at", "pk")
        .values_list("checked_at", "counts")
    )
    for checked_at, counts in runs:
        per_night[timezone.localtime(checked_at).date().isoformat()] = counts
    return [
        {"night": night, **{kind: counts.get(kind, 0) for kind in FindingKind.values}}
        for night, counts in sorted(per_night.items())
    ]


def findings_by_kind(report: HealthReport, limit: int) -> list[dict]:
    """The report's findings per kind, in the contract's order, at most `limit`
    of each (the rest are counted, and listed in full by the API)."""
    groups = []
    for kind in FindingKind:
        total = report.counts.get(kind.value, 0)
        shown = list(
            report.findings.filter(kind=kind).order_by("trace_id", "product_id", "pk")
            .values("trace_id", "product_id", "detail")[:limit]
        ) if total else []
        groups.append({"kind": kind.value, "label": kind.label, "total": total, "findings": shown,
                       "more": total - len(shown)})
    return groups


def _run(project: Project, now: datetime) -> HealthReport:
    report = HealthReport.objects.create(project=project, checked_at=now, started_at=timezone.now())
    dag_faults.find_all(report.pk, project.pk, now, settings.HEALTH_BROKEN_LINK_GRACE_SECONDS,
                        limits.round_limit(project.pk))
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


def _nightly_crontab() -> crontab:
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        if entry.get("task") == NIGHTLY_TASK and isinstance(entry.get("schedule"), crontab):
            return entry["schedule"]
    return DEFAULT_NIGHTLY
