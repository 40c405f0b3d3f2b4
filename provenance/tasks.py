from celery import shared_task

from core.limits import store as flags
from core.timestamps import parse_instant
from provenance import health
from provenance.retention import job as retention_job
from provenance.root_causes import catch_up, pending, store
from tenancy.models import Project


@shared_task(name=health.NIGHTLY_TASK)
def check_dag_health(now: str | None = None) -> list[int]:
    """Beat sends this at 03:00 and on a 15-minute catch-up tick; it checks only
    the projects not yet checked since the last 03:00, so repeats are no-ops.
    Returns the ids of the reports it stored."""
    return [report.pk for report in health.check_due(parse_instant(now) if now else None)]


@shared_task(name="provenance.tasks.apply_retention")
def apply_retention() -> int:
    """The nightly retention job; idempotent, so a redelivered message only
    finds less to do. Returns the number of projects it ran for."""
    return len(retention_job.apply_all())


@shared_task(name="provenance.tasks.refresh_root_causes")
def refresh_root_causes(project_id: int, trace_pks: list[int], product_ids: list[str]) -> int:
    """The stored root causes of these traces and of every trace downstream of
    these nodes (what ingests sent before they marked their changes pending,
    still in a broker's queue after an upgrade). Idempotent
    (recomputed from the rows); what a lost message misses, the catch-up job
    finds. Returns the number of answers that went wrong among them."""
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return 0
    return store.refresh(project, store.affected_traces(project, trace_pks, product_ids))


# How long a queued settle request stands for later ones. If its message is
# lost, the flag lapses; the periodic catch-up drains what it would have.
SETTLE_QUEUED_SECONDS = 60


def settle_queued(project_id: int) -> str:
    return f"settle-root-causes-queued:{project_id}"


def ask_to_settle(project_id: int) -> None:
    """After an ingest commits (with a broker): a worker is asked to drain the
    project's marks, unless a request is already waiting. That one drains
    every mark committed before it starts, so under steady ingest the queue
    holds one per project instead of one per batch, and what beat sends (the
    rollup refresh, the alert tick) is not left behind hundreds of them."""
    if flags.claim(settle_queued(project_id), SETTLE_QUEUED_SECONDS):
        try:
            settle_root_causes.delay(project_id)
        except Exception:
            # Not sent: the next batch asks again rather than waiting for the flag to lapse.
            flags.release(settle_queued(project_id))
            raise


@shared_task(name="provenance.tasks.settle_root_causes")
def settle_root_causes(project_id: int) -> int:
    """Refreshes what the project's ingests marked (provenance.root_causes.pending),
    so readers find it done. Idempotent: a second copy finds the marks gone.
    Returns the traces refreshed."""
    # Cleared before the drain reads the marks: a mark committed after this asks for another drain.
    flags.release(settle_queued(project_id))
    project = Project.objects.filter(pk=project_id).first()
    return pending.drain(project) if project else 0


@shared_task(name="provenance.tasks.rebuild_root_causes")
def rebuild_root_causes(project_id: int) -> int:
    """Every trace of a project anew (its high-uncertainty threshold changed)."""
    project = Project.objects.filter(pk=project_id).first()
    return catch_up.rebuild(project) if project else 0


@shared_task(name="provenance.tasks.catch_up_root_causes")
def catch_up_root_causes() -> int:
    """The periodic catch-up (also `manage.py refresh_root_causes`)."""
    return catch_up.run()
