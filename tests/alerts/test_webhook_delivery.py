"""Webhook deliveries against a real HTTP server on loopback: signatures checked
independently, retries, 410, redirects, timeouts, bounded attempts."""

import io
import time
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from alerts.models import Delivery
from tests.support.alerts import SECRET
from tests.support.events import node_event

FUSED = {"fuse": {"decision": "block", "reason": "low"}}
FUSE_RULE = [{"metric": "fuse_rate", "window": "5m", "op": ">", "threshold": 0.5}]


@pytest.fixture
def firing_rule(create_rule, ingest, receiver):
    """A rule with a webhook to the receiver and fused traffic at minute 0."""

    def make(secret=SECRET, **spec):
        rule = create_rule(name="fuses", conditions=FUSE_RULE,
                           destinations=[{"type": "webhook", "url": receiver.url, "secret": secret}], **spec)
        ingest(node_event("f1", "t1", seconds=10, **FUSED), node_event("f2", "t2", seconds=20, **FUSED))
        return rule

    return make


def retry_due():
    call_command("retry_deliveries", stdout=io.StringIO())


def test_firing_then_resolved_are_posted_signed_per_the_contract(firing_rule, receiver, evaluate, settings):
    settings.SITE_ROOT = "https://dash.example"
    rule = firing_rule()
    evaluate(1)
    assert len(receiver.received) == 1, "the first attempt happens inside the evaluation"
    evaluate(2)
    assert len(receiver.received) == 1, "nothing more while it keeps firing"
    evaluate(10)
    firing, resolved = receiver.wait_for(2)

    for request in (firing, resolved):
        assert request.verified, "signature checked with an independent Standard Webhooks implementation"
        assert request.headers["content-type"] == "application/json"
        assert request.headers["webhook-signature"].startswith("v1,")
        assert abs(int(request.headers["webhook-timestamp"]) - time.time()) < 60
    assert firing.headers["webhook-id"] != resolved.headers["webhook-id"]
    assert firing.json == {
        "type": "alert.firing", "project": "acme", "rule": {"id": rule["id"], "name": "fuses"},
        "at": "2026-11-20T09:01:00Z", "values": [{"metric": "fuse_rate", "value": 1.0}],
        "url": f"https://dash.example/alerts/acme/{rule['id']}/",
    }
    assert resolved.json["type"] == "alert.resolved"
    assert resolved.json["at"] == "2026-11-20T09:10:00Z"
    assert resolved.json["values"] == [{"metric": "fuse_rate", "value": 0.0}]


def test_a_secret_without_prefix_signs_with_its_utf8_bytes(firing_rule, receiver, evaluate):
    receiver.secret = "plain secret ✓"
    firing_rule(secret="plain secret ✓")
    evaluate(1)
    assert receiver.wait_for(1)[0].verified


def test_a_secret_is_generated_when_none_is_given(create_rule, api, receiver):
    rule = create_rule(conditions=FUSE_RULE, destinations=[{"type": "webhook", "url": receiver.url}])
    assert rule["destinations"][0]["secret"].startswith("whsec_")


def test_failures_are_retried_with_backoff_and_the_same_webhook_id(firing_rule, receiver, evaluate, settings):
    settings.WEBHOOK_RETRY_BASE_SECONDS = 30
    receiver.script = [500, 503]
    firing_rule()
    evaluate(1)
    delivery = Delivery.objects.get()
    assert delivery.status == "pending"
    assert timedelta(seconds=25) < delivery.next_attempt_at - timezone.now() <= timedelta(seconds=30)

    retry_due()
    assert len(receiver.received) == 1, "not due yet: the schedule is in the database"

    Delivery.objects.update(next_attempt_at=timezone.now())  # 30 s pass
    retry_due()
    delivery.refresh_from_db()
    assert delivery.status == "pending"
    assert timedelta(seconds=55) < delivery.next_attempt_at - timezone.now() <= timedelta(seconds=60), "doubled"

    Delivery.objects.update(next_attempt_at=timezone.now())  # 60 s pass
    retry_due()
    received = receiver.wait_for(3)
    assert [r.headers["webhook-id"] for r in received] == [delivery.webhook_id] * 3
    assert all(r.verified for r in received)
    assert len({r.body for r in received}) == 1, "every attempt sends the same body"
    delivery.refresh_from_db()
    assert delivery.status == "delivered"
    attempts = list(delivery.attempts.values_list("number", "status_code", "success"))
    assert attempts == [(1, 500, False), (2, 503, False), (3, 200, True)]
    assert all(a.latency_ms is not None and a.response_excerpt.startswith("answered") for a in delivery.attempts.all())


def test_attempts_are_bounded(firing_rule, receiver, evaluate, settings):
    settings.WEBHOOK_MAX_ATTEMPTS = 3
    receiver.default = 500
    firing_rule()
    evaluate(1)
    for _ in range(5):
        retry_due()
    assert len(receiver.received) == 3
    delivery = Delivery.objects.get()
    assert delivery.status == "failed"
    assert delivery.last_error == "received status 500"


def test_410_disables_the_destination(firing_rule, receiver, evaluate, api):
    receiver.script = [410]
    rule = firing_rule()
    evaluate(1)
    retry_due()
    assert len(receiver.received) == 1, "a 410 is permanent: no retry"
    assert Delivery.objects.get().status == "failed"
    destination = api.get(f"/api/v1/alert-rules/{rule['id']}").json()["destinations"][0]
    assert destination["disabled"] is True
    assert "410" in destination["disabled_reason"]

    evaluate(10)  # resolves: nothing goes to a disabled destination
    assert len(receiver.received) == 1


def test_redirects_are_not_followed(firing_rule, receiver, evaluate):
    receiver.script = [("redirect", f"http://127.0.0.1:{receiver.port}/elsewhere")]
    firing_rule()
    evaluate(1)
    time.sleep(0.2)
    assert [r.path for r in receiver.received] == ["/hook"]
    delivery = Delivery.objects.get()
    attempt = delivery.attempts.get()
    assert attempt.status_code == 302 and attempt.success is False
    assert "redirect" in attempt.error and "not followed" in attempt.error
    assert delivery.status == "pending", "a redirect is a failure like any status >= 300, so it is retried"


def test_a_slow_receiver_times_out(firing_rule, receiver, evaluate, settings):
    settings.WEBHOOK_TIMEOUT_SECONDS = 1
    receiver.script = [("sleep", 3, 200)]
    firing_rule()
    started = time.monotonic()
    evaluate(1)
    assert time.monotonic() - started < 2.5
    attempt = Delivery.objects.get().attempts.get()
    assert attempt.error == "timed out after 1 s"
    assert 900 <= attempt.latency_ms < 2500


def test_a_refused_address_is_never_contacted(firing_rule, receiver, evaluate, settings):
    firing_rule()
    settings.WEBHOOK_ALLOW_PRIVATE = False
    evaluate(1)
    time.sleep(0.2)
    assert receiver.received == []
    delivery = Delivery.objects.get()
    assert delivery.status == "failed"
    assert delivery.last_error == "refused: 127.0.0.1 is a loopback address"


def test_a_muted_rule_records_but_sends_nothing(firing_rule, receiver, evaluate, api, alert_events):
    rule = firing_rule()
    muted_until = (timezone.now() + timedelta(days=3650)).isoformat()
    assert api.patch(f"/api/v1/alert-rules/{rule['id']}", {"muted_until": muted_until}, format="json").status_code == 200
    evaluate(1)
    assert receiver.received == []
    assert [(e["state"], e["muted"]) for e in alert_events()] == [("firing", True)]


def test_the_celery_retry_task_sends_due_deliveries(firing_rule, receiver, evaluate,
                                                    django_capture_on_commit_callbacks):
    from alerts.tasks import retry_due_deliveries

    receiver.script = [500]
    firing_rule()
    evaluate(1)
    with django_capture_on_commit_callbacks(execute=True):
        retry_due_deliveries.apply()
    assert len(receiver.wait_for(2)) == 2
    assert Delivery.objects.get().status == "delivered"
