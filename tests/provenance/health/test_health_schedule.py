"""The nightly schedule: 03:00 in the configured time zone, a missed night run once on return."""

from datetime import UTC, datetime

import pytest
from celery.schedules import crontab
from django.conf import settings

from provenance import health
from provenance.models import HealthReport
from provenance.tasks import check_dag_health
from tests.provenance.health.health_runs import run_check

pytestmark = pytest.mark.django_db

LONG_AGO = datetime(2026, 1, 1, tzinfo=UTC)


def run_task(now: datetime) -> list[int]:
    return check_dag_health.apply(kwargs={"now": now.isoformat()}).get()


def test_beat_sends_the_check_nightly_and_on_a_catch_up_tick():
    entries = [e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == "provenance.tasks.check_dag_health"]
    nightly = [e["schedule"] for e in entries if isinstance(e["schedule"], crontab)]
    assert nightly and nightly[0].hour == {3} and nightly[0].minute == {0}
    assert any(e["schedule"] == 900.0 for e in entries)


def test_the_last_scheduled_night_is_three_in_the_configured_time_zone(settings):
    assert health.last_scheduled_run(datetime(2026, 11, 20, 2, 59, tzinfo=UTC)) == datetime(2026, 11, 19, 3, tzinfo=UTC)
    assert health.last_scheduled_run(datetime(2026, 11, 20, 3, 0, tzinfo=UTC)) == datetime(2026, 11, 20, 3, tzinfo=UTC)
    settings.CELERY_TIMEZONE = "Europe/Berlin"  # UTC+1 in November
    assert health.last_scheduled_run(datetime(2026, 11, 20, 2, 30, tzinfo=UTC)) == datetime(2026, 11, 20, 2, tzinfo=UTC)


def test_the_nightly_run_checks_each_project_once_per_night(make_project):
    acme, _ = make_project("acme", created_at=LONG_AGO)
    globex, _ = make_project("globex", created_at=LONG_AGO)
    first = run_task(datetime(2026, 11, 20, 3, 0, 1, tzinfo=UTC))
    assert sorted(HealthReport.objects.filter(pk__in=first).values_list("project__slug", flat=True)) == ["acme", "globex"]
    # The catch-up tick and a redelivered message find nothing due.
    assert run_task(datetime(2026, 11, 20, 3, 15, tzinfo=UTC)) == []
    assert run_task(datetime(2026, 11, 20, 3, 0, 2, tzinfo=UTC)) == []
    assert len(run_task(datetime(2026, 11, 21, 3, 0, 1, tzinfo=UTC))) == 2


def test_a_night_missed_while_down_runs_once_when_the_scheduler_is_back(make_project):
    project, _ = make_project(created_at=LONG_AGO)
    run_task(datetime(2026, 11, 18, 3, 0, tzinfo=UTC))
    # Down from before 03:00 on the 19th until 10:40 on the 20th: two nights missed, one run makes up for them.
    back = datetime(2026, 11, 20, 10, 40, tzinfo=UTC)
    assert len(run_task(back)) == 1
    assert run_task(datetime(2026, 11, 20, 10, 55, tzinfo=UTC)) == []
    assert HealthReport.objects.filter(project=project).count() == 2


def test_a_project_created_after_the_last_night_waits_for_the_next(make_project):
    make_project(created_at=datetime(2026, 11, 20, 9, tzinfo=UTC))
    assert run_task(datetime(2026, 11, 20, 10, tzinfo=UTC)) == []
    assert len(run_task(datetime(2026, 11, 21, 3, tzinfo=UTC))) == 1


def test_a_manual_run_counts_for_the_night(make_project):
    make_project(created_at=LONG_AGO)
    run_check("--now", "2026-11-20T04:00:00Z")
    assert run_task(datetime(2026, 11, 20, 4, 15, tzinfo=UTC)) == []
