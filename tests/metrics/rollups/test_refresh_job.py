"""The periodic refresh: the beat task and its management command, and the
query count of the alert path."""

import io
from datetime import timedelta

from django.conf import settings
from django.core.management import call_command

from metrics.models import HourRollup, Watermark
from metrics.rollups.refresh import ROLLUP_MODELS
from metrics.tasks import refresh_rollups
from metrics.values import Filters, many_window_values
from tests.support.events import BASE_TIME, node_event


def test_beat_names_the_task_and_it_runs(project, ingest):
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert refresh_rollups.name in scheduled
    ingest(node_event("n1", seconds=1), node_event("n2", seconds=2))
    refresh_rollups.delay()
    assert HourRollup.objects.filter(project=project, mask=0).get().nodes == 2


def test_the_command_reports_what_it_folded_in(project, ingest):
    ingest(node_event("n1", seconds=1))
    out = io.StringIO()
    call_command("refresh_metric_rollups", stdout=out)
    assert "1 new node(s)" in out.getvalue()
    assert Watermark.objects.get().node_id > 0
    out = io.StringIO()
    call_command("refresh_metric_rollups", stdout=out)
    assert "0 new node(s)" in out.getvalue()


def test_an_alert_tick_costs_a_few_queries_whatever_the_rule_count(project, ingest, django_assert_max_num_queries):
    ingest(*[node_event(f"n{i}", f"t{i % 7}", seconds=30 * i, agent_id=f"a{i % 3}") for i in range(100)])
    call_command("refresh_metric_rollups", stdout=io.StringIO())
    now = BASE_TIME + timedelta(minutes=50)
    requests = [(now - timedelta(minutes=m), now, Filters(agent_id=f"a{i % 3}"))
                for i in range(100) for m in (5, 15, 30)]
    with django_assert_max_num_queries(4):
        values = many_window_values(project, requests)
    assert len(values) == 300 and values[-1]["node_count"] > 0


def test_deleting_a_project_removes_its_rollups_and_no_other_projects(project, ingest, other_api):
    """Rollup rows carry their project without a database constraint
    (metrics.models.derived_project_key): Django's cascade removes them."""
    ingest(node_event("n1", seconds=1), node_event("n2", "t2", seconds=2, confidence=0.1))
    ingest(node_event("m1", seconds=1), client=other_api)
    refresh_rollups()
    assert HourRollup.objects.filter(project=project).exists()
    other = HourRollup.objects.exclude(project=project).values_list("project_id", flat=True).first()

    project.delete()

    left = {model.__name__: model.objects.filter(project_id=project.pk).count() for model in ROLLUP_MODELS}
    assert left == dict.fromkeys(left, 0)
    assert HourRollup.objects.filter(project_id=other, mask=0).get().nodes == 1
