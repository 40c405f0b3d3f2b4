"""When the nightly check is due.

Beat sends the check at 03:00 (in the configured time zone, read from the beat
schedule) and again on a 15-minute tick, so a night missed while the scheduler
was down is run once, soon after it is back: a project is due when it has no
report since the last scheduled night.
"""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from celery.schedules import crontab
from django.conf import settings

from provenance.models import HealthReport
from tenancy.models import Project

NIGHTLY_TASK = "provenance.tasks.check_dag_health"
DEFAULT_NIGHTLY = crontab(hour=3, minute=0)


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


def _nightly_crontab() -> crontab:
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        if entry.get("task") == NIGHTLY_TASK and isinstance(entry.get("schedule"), crontab):
            return entry["schedule"]
    return DEFAULT_NIGHTLY
