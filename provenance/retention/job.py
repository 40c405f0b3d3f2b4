"""The retention job: for each project with a retention setting, summarize
old nodes' text and delete expired traces, recording a `RetentionRun`.

Nightly from beat and `python manage.py apply_retention`. Every step is a
bounded batch in its own transaction, and every batch's filter excludes what
is already done, so the job is idempotent and a run that died is completed by
the next. A dry run (and the settings page's preview) only counts.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.db.models import Count, F, Q
from django.utils import timezone

from core.dialect import is_postgres
from provenance.models import Node, RetentionRun
from provenance.retention import deletion
from provenance.retention.summarize import Summarizing
from tenancy.models import Project

# Namespace of the PostgreSQL advisory lock that keeps two runs off one project.
LOCK_NAMESPACE = 0x52455445


@dataclass(frozen=True)
class Retention:
    """A project's retention settings (None: keep forever)."""

    trace_days: int | None
    full_content_days: int | None
    keep_full_below: float

    @classmethod
    def of(cls, project: Project) -> "Retention":
        return cls(project.trace_days, project.full_content_days, project.keep_full_below)

    def as_dict(self) -> dict:
        return {"trace_days": self.trace_days, "full_content_days": self.full_content_days,
                "keep_full_below": self.keep_full_below}


@dataclass(frozen=True)
class Outcome:
    project: str
    nodes_summarized: int
    traces_deleted: int
    nodes_deleted: int
    dry_run: bool
    skipped: str = ""

    def line(self) -> str:
        if self.skipped:
            return f"{self.project}: skipped ({self.skipped})"
        verb = "would summarize" if self.dry_run else "summarized"
        deleted = "would delete" if self.dry_run else "deleted"
        return (f"{self.project}: {verb} {self.nodes_summarized} nodes; {deleted} {self.traces_deleted} traces "
                f"({self.nodes_deleted} nodes)")


def preview(project: Project, retention: Retention, now: datetime | None = None) -> Outcome:
    """What a run would do today with these settings (saved or not); writes nothing."""
    now = now or timezone.now()
    summarized = traces = nodes = 0
    if retention.trace_days is not None:
        expired = deletion.last_activity_before(project, now - timedelta(days=retention.trace_days))
        counts = expired.aggregate(traces=Count("pk", distinct=True), nodes=Count("nodes"))
        traces, nodes = counts["traces"], counts["nodes"]
    if retention.full_content_days is not None:
        pass_ = Summarizing.of(project, now - timedelta(days=retention.full_content_days), retention.keep_full_below)
        candidates = pass_.candidates()
        if retention.trace_days is not None:
            candidates = candidates.exclude(trace__in=deletion.last_activity_before(
                project, now - timedelta(days=retention.trace_days)).values("pk"))
        summarized = candidates.count()
    return Outcome(project.slug, summarized, traces, nodes, dry_run=True)


def apply_project(project: Project, now: datetime | None = None, dry_run: bool = False) -> Outcome:
    now = now or timezone.now()
    retention = Retention.of(project)
    if dry_run:
        return preview(project, retention, now)
    if not _try_lock(project):
        return Outcome(project.slug, 0, 0, 0, dry_run=False, skipped="another run is in progress")
    try:
        RetentionRun.objects.filter(project=project, status=RetentionRun.Status.RUNNING).update(
            status=RetentionRun.Status.INTERRUPTED)
        run = RetentionRun.objects.create(project=project, as_of=now, settings=retention.as_dict())
        if retention.trace_days is not None:
            cutoff = now - timedelta(days=retention.trace_days)
            while True:
                traces, nodes = deletion.delete_batch(project, cutoff, settings.RETENTION_BATCH_TRACES)
                if not traces:
                    break
                _progress(run, traces_deleted=traces, nodes_deleted=nodes)
            deletion.sweep_stray_fuses(project)
            deletion.delete_audit_entries(project, cutoff)
        if retention.full_content_days is not None:
            pass_ = Summarizing.of(project, now - timedelta(days=retention.full_content_days),
                                   retention.keep_full_below)
            pass_.summarize_all(settings.RETENTION_BATCH_NODES, settings.RETENTION_WORKERS, timezone.now,
                                lambda summarized: _progress(run, nodes_summarized=summarized))
        run.status = RetentionRun.Status.FINISHED
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "finished_at"])
        run.refresh_from_db()
        return Outcome(project.slug, run.nodes_summarized, run.traces_deleted, run.nodes_deleted, dry_run=False)
    finally:
        _unlock(project)


def apply_all(now: datetime | None = None, dry_run: bool = False, slug: str | None = None) -> list[Outcome]:
    projects = Project.objects.order_by("pk")
    if slug is not None:
        projects = projects.filter(slug=slug)
    else:
        projects = projects.filter(Q(trace_days__isnull=False) | Q(full_content_days__isnull=False))
    return [apply_project(project, now, dry_run) for project in projects]


def share_with_full_text(project: Project) -> float | None:
    counts = Node.objects.filter(project=project).aggregate(
        total=Count("pk"), full=Count("pk", filter=Q(summarized_at__isnull=True)))
    return counts["full"] / counts["total"] if counts["total"] else None


def _progress(run: RetentionRun, **added: int) -> None:
    """Counted with each batch (in its transaction, when it has one), so an
    interrupted run still says what it did."""
    RetentionRun.objects.filter(pk=run.pk).update(
        batches=F("batches") + 1, **{field: F(field) + n for field, n in added.items()})


def _try_lock(project: Project) -> bool:
    if not is_postgres():
        return True
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [LOCK_NAMESPACE, project.pk % 2**31])
        return cursor.fetchone()[0]


def _unlock(project: Project) -> None:
    if is_postgres():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [LOCK_NAMESPACE, project.pk % 2**31])
