"""An event's deliveries are made after the tick commits (alerts/notifications.fan_out):
a fan-out whose message was lost is made by the periodic delivery job, and
however many runners ask for it, each destination gets the event once."""


import pytest

from alerts import evaluation, notifications, tasks
from alerts.models import AlertEvent, Delivery
from tests.support.alerts import SECRET, at_minute
from tests.support.at_once import run_at_once
from tests.support.events import node_event

FUSED = {"fuse": {"decision": "block", "reason": "low"}}
FUSE_RULE = [{"metric": "fuse_rate", "window": "10m", "op": ">", "threshold": 0.5}]


@pytest.fixture
def routed_rule(create_rule, ingest, receiver, slack, api):
    """A firing rule with two destinations, and a silenced one that fires too."""
    ingest(*[node_event(f"f{i}", f"t{i}", seconds=i, **FUSED) for i in range(3)])
    create_rule(name="routed", conditions=FUSE_RULE, destinations=[
        {"type": "webhook", "url": receiver.url, "secret": SECRET}, {"type": "slack", "url": slack.url}])
    silenced = create_rule(name="silenced", conditions=FUSE_RULE, destinations=[
        {"type": "webhook", "url": receiver.url, "secret": SECRET}])
    assert api.post("/api/v1/silences", {"rule_id": silenced["id"], "until": "2099-01-01T00:00:00Z",
                                         "reason": "maintenance"}, format="json").status_code == 201


def test_a_fan_out_lost_after_the_commit_is_made_by_the_periodic_job_once(routed_rule, receiver, slack,
                                                                          django_capture_on_commit_callbacks):
    lost = evaluation.tick(at_minute(1), send=lambda event_ids: None)  # the fan-out message never arrives
    assert Delivery.objects.count() == 0
    assert list(AlertEvent.objects.filter(fan_out_pending=True).values_list("pk", flat=True)) == lost
    assert AlertEvent.objects.filter(rule__name="silenced", state="firing", fan_out_pending=False).exists()

    with django_capture_on_commit_callbacks(execute=True):
        tasks.retry_due_deliveries.apply()
    assert [r.verified for r in receiver.wait_for(1)] == [True]
    assert len(slack.wait_for(1)) == 1
    assert sorted(Delivery.objects.values_list("status", "event_id")) == [("delivered", lost[0])] * 2

    # The message turns up after all, the job runs again: nothing more is made or sent.
    with django_capture_on_commit_callbacks(execute=True):
        tasks.fan_out.apply(args=[lost])
        tasks.retry_due_deliveries.apply()
    assert notifications.fan_out(lost) == []
    assert Delivery.objects.count() == 2
    assert (len(receiver.received), len(slack.received)) == (1, 1)


@pytest.mark.django_db(transaction=True)
def test_runners_fanning_out_the_same_events_at_once_make_each_delivery_once(make_project):
    from alerts import alert_rules
    from alerts.serializers import AlertRuleSerializer
    from provenance.ingest.write import ingest_events

    project, _ = make_project("fan-out")
    ingest_events(project, [node_event(f"f{i}", f"t{i}", seconds=i, **FUSED) for i in range(3)])
    for i in range(10):
        data = AlertRuleSerializer(data={"name": f"r{i}", "conditions": FUSE_RULE, "destinations": [
            {"type": "slack", "url": "https://hooks.slack.example/services/T/B/x"},
            {"type": "email", "to": ["oncall@example.org"]}]})
        data.is_valid(raise_exception=True)
        alert_rules.create_rule(project, data.validated_data)
    event_ids = evaluation.evaluate(at_minute(1))
    assert len(event_ids) == 10

    made = run_at_once(3, lambda: notifications.fan_out(event_ids))
    assert sum(len(ids) for ids in made) == 20
    assert Delivery.objects.count() == 20
    assert len(set(Delivery.objects.values_list("event_id", "destination_id"))) == 20
