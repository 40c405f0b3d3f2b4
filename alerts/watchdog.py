"""The job watches itself (a dead man's switch): when the alert tick or a
project's nightly DAG health check has not run for twice its period, the
project's destinations get one "checks are not running" notice per stall,
and the Overview says so.

The tick records its runs here (JobHeartbeat, wall clock); the health check's
are its reports (started_at). The watch runs apart from both (its own beat
entry and `manage.py watch_checks`), so a dead tick is still noticed; a dead
beat is not, and the Overview, computed on every view, says so then."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Max
from django.utils import timezone

from alerts import notifications
from alerts.models import AlertRule, JobHeartbeat, StalledNotice
from provenance.models import HealthReport
from tenancy.models import Project

TICK = "alert_tick"
HEALTH = "dag_health"
PERIODS = {TICK: timedelta(minutes=1), HEALTH: timedelta(days=1)}
NAMES = {TICK: "The alert evaluation (every minute)", HEALTH: "The nightly DAG health check"}
CONSEQUENCES = {TICK: "alert rules are not being evaluated and nothing fires",
                HEALTH: "broken links, orphans and cycles are not being looked for"}


def beat(job: str, at: datetime | None = None) -> None:
    JobHeartbeat.objects.update_or_create(job=job, defaults={"last_run_at": at or timezone.now()})


@dataclass(frozen=True)
class Stall:
    job: str
    last_run_at: datetime

    @property
    def sentence(self) -> str:
        return (f"{NAMES[self.job]} has not run since {self.last_run_at:%Y-%m-%d %H:%M} UTC, more than twice its "
                f"period: {CONSEQUENCES[self.job]}.")


def _stalled(last_run: datetime | None, job: str, now: datetime) -> bool:
    return last_run is not None and now - last_run > 2 * PERIODS[job]


def stalls(projects, now: datetime) -> dict[int, list[Stall]]:
    """{project id: its stalled jobs}; a job that never ran is not stalled (a new installation)."""
    tick = JobHeartbeat.objects.filter(job=TICK).values_list("last_run_at", flat=True).first()
    health = dict(HealthReport.objects.filter(project__in=projects).values("project")
                  .annotate(last=Max("started_at")).values_list("project", "last"))
    found = {}
    for project in projects:
        stalled = [Stall(TICK, tick)] if _stalled(tick, TICK, now) else []
        if _stalled(health.get(project.pk), HEALTH, now):
            stalled.append(Stall(HEALTH, health[project.pk]))
        if stalled:
            found[project.pk] = stalled
    return found


def project_stalls(project, now: datetime | None = None) -> list[Stall]:
    return stalls([project], now or timezone.now()).get(project.pk, [])


def notify(now: datetime | None = None) -> list[int]:
    """One notice per stall to each project with enabled rules; the ids of the deliveries made."""
    now = now or timezone.now()
    projects = list(Project.objects.filter(pk__in=AlertRule.objects.filter(enabled=True).values("project")))
    found = stalls(projects, now)
    delivery_ids = []
    for project in projects:
        for stall in found.get(project.pk, []):
            _, created = StalledNotice.objects.get_or_create(project=project, job=stall.job,
                                                             last_run_at=stall.last_run_at)
            if created:
                delivery_ids += [d.pk for d in notifications.create_notice_deliveries(project, now, stall.sentence)]
    return delivery_ids


def overview_rows(project) -> list[dict]:
    """The Overview's "checks are not running" panel (metrics.overview_panels)."""
    return [{"title": stall.sentence, "state": "not_running", "at": stall.last_run_at, "url": ""}
            for stall in project_stalls(project)]
