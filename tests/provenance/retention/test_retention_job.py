"""The retention job runs itself: nightly from beat, once per project with a
retention setting, and says what it did in a run record."""

from datetime import timedelta

import pytest
from celery.schedules import crontab
from django.conf import settings

from provenance.models import RetentionRun
from provenance.tasks import apply_retention as retention_task
from tests.provenance.retention.retention_runs import apply_retention
from tests.support.events import BASE_TIME, node_event

pytestmark = pytest.mark.django_db


def test_beat_runs_the_job_every_night():
    [entry] = [e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == "provenance.tasks.apply_retention"]
    assert isinstance(entry["schedule"], crontab)


def test_only_projects_with_a_setting_are_run_and_each_run_is_recorded(api, other_api, ingest):
    ingest(node_event("a", "t", confidence=0.95, content="x" * 400))
    api.patch("/api/v1/project", {"retention": {"full_content_days": 1}}, format="json")
    assert retention_task.apply().get() == 1  # globex keeps everything: nothing to run
    [run] = RetentionRun.objects.all()
    assert (run.project.slug, run.status, run.nodes_summarized, run.batches) == ("acme", "finished", 1, 1)
    assert run.settings == {"trace_days": None, "full_content_days": 1, "keep_full_below": 0.8}


def test_with_nothing_set_the_command_says_so(db):
    assert apply_retention() == "no project has retention settings; nothing to do\n"


def test_a_malformed_now_is_refused(db):
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="--now"):
        apply_retention("--now", "soon")


def test_the_job_is_bounded_by_batches(api, ingest, settings):
    settings.RETENTION_BATCH_NODES = 10
    ingest(*[node_event(f"n{i}", "t", confidence=0.95, seconds=i) for i in range(35)])
    api.patch("/api/v1/project", {"retention": {"full_content_days": 0}}, format="json")
    apply_retention("--now", (BASE_TIME + timedelta(days=1)).isoformat())
    run = RetentionRun.objects.get()
    assert run.nodes_summarized == 35
    assert run.batches == 4
