from celery import shared_task

from provenance import health
from provenance.retention import job as retention_job
from provenance.validation import parse_timestamp


@shared_task(name=health.NIGHTLY_TASK)
def check_dag_health(now: str | None = None) -> list[int]:
    """Beat sends this at 03:00 and on a 15-minute catch-up tick; it checks only
    the projects not yet checked since the last 03:00, so repeats are no-ops.
    Returns the ids of the reports it stored."""
    return [report.pk for report in health.check_due(parse_timestamp(now) if now else None)]


@shared_task(name="provenance.tasks.apply_retention")
def apply_retention() -> int:
    """The nightly retention job; idempotent, so a redelivered message only
    finds less to do. Returns the number of projects it ran for."""
    return len(retention_job.apply_all())
