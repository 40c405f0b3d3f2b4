"""The dead man's switch: when the alert tick or the nightly health check has
not run for twice its period, every kind of destination gets one "checks are
not running" notice per stall, and the Overview says so."""

import io
from datetime import timedelta

from django.core.management import call_command
from django.utils import timezone

from alerts.models import JobHeartbeat
from provenance.models import HealthReport
from tests.support.alerts import SECRET

RULE = [{"metric": "fuse_rate", "window": "5m", "op": ">", "threshold": 0.2}]


def watch():
    call_command("watch_checks", stdout=io.StringIO())


def test_a_stalled_tick_is_told_once_to_every_kind(create_rule, evaluate, receiver, slack, pagerduty, smtp):
    create_rule(conditions=RULE, destinations=[
        {"type": "webhook", "url": receiver.url, "secret": SECRET}, {"type": "slack", "url": slack.url},
        {"type": "pagerduty", "routing_key": "KEY"}, {"type": "email", "to": ["oncall@example.org"]}])
    evaluate(1)
    watch()
    assert (receiver.received, slack.received, pagerduty.received, smtp.messages) == ([], [], [], []), "it runs"

    JobHeartbeat.objects.update(last_run_at=timezone.now() - timedelta(minutes=3))  # the tick stopped 3 min ago
    watch()
    watch()
    assert [len(receiver.received), len(slack.received), len(pagerduty.received), len(smtp.messages)] == [1, 1, 1, 1]
    notice = receiver.received[0]
    assert notice.verified and notice.json["type"] == "checks.not_running" and notice.json["project"] == "acme"
    assert "alert evaluation (every minute) has not run since" in notice.json["detail"]
    assert slack.received[0].problems == [] and "Checks are not running" in slack.received[0].json["text"] + str(
        slack.received[0].json["blocks"])
    assert pagerduty.received[0].problems == []
    assert pagerduty.received[0].json["dedup_key"] == "denoise-acme-checks"
    assert smtp.messages[0][2]["Subject"] == "[Denoise] checks are not running (acme)"

    evaluate(2)  # it runs again, then stops again: a new stall, a new notice
    JobHeartbeat.objects.update(last_run_at=timezone.now() - timedelta(minutes=5))
    watch()
    assert len(receiver.received) == 2


def test_a_stalled_health_check_is_told(create_rule, project, receiver):
    create_rule(conditions=RULE, destinations=[{"type": "webhook", "url": receiver.url, "secret": SECRET}])
    long_ago = timezone.now() - timedelta(days=3)
    HealthReport.objects.create(project=project, checked_at=long_ago, started_at=long_ago, finished_at=long_ago)
    watch()
    assert "nightly DAG health check has not run since" in receiver.received[0].json["detail"]


def test_jobs_that_never_ran_are_not_stalled(create_rule, receiver):
    create_rule(conditions=RULE, destinations=[{"type": "webhook", "url": receiver.url, "secret": SECRET}])
    watch()
    assert receiver.received == []


def test_the_overview_says_checks_are_not_running(member, create_rule, evaluate):
    create_rule(conditions=RULE)
    evaluate(1)
    assert 'id="checks-not-running"' not in member.get("/metrics/acme/").content.decode()
    JobHeartbeat.objects.update(last_run_at=timezone.now() - timedelta(minutes=3))
    page = member.get("/metrics/acme/").content.decode()
    assert 'id="checks-not-running"' in page and "The alert evaluation (every minute) has not run since" in page
