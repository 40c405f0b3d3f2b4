"""The evaluation tick: repeated, missed and concurrent ticks never notify
twice; one tick costs a fixed number of queries whatever the rule count,
with or without destinations."""

import io

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from alerts import evaluation, notifications
from alerts.models import AlertEvent, Delivery
from tests.support.alerts import at_minute
from tests.support.at_once import run_at_once
from tests.support.events import node_event

FUSED = {"fuse": {"decision": "block", "reason": "low"}}
FUSE_RULE = [{"metric": "fuse_rate", "window": "10m", "op": ">", "threshold": 0.5}]


@pytest.fixture
def fused_traffic(ingest):
    ingest(*[node_event(f"f{i}", f"t{i}", seconds=i, **FUSED) for i in range(3)])


def states(alert_events) -> list[str]:
    return [e["state"] for e in reversed(alert_events())]


def test_running_the_same_tick_again_sends_nothing_twice(create_rule, fused_traffic, evaluate, alert_events):
    create_rule(conditions=FUSE_RULE)
    evaluate(1)
    evaluate(1)
    assert states(alert_events) == ["firing"]


def test_ticks_missed_during_downtime_fire_nothing_twice(create_rule, fused_traffic, evaluate, alert_events, api):
    rule = create_rule(conditions=FUSE_RULE)
    evaluate(1)
    evaluate(7)  # minutes 2-6 never ran; the rule kept holding
    evaluate(4)  # a late tick for a time already evaluated is skipped
    assert states(alert_events) == ["firing"]
    assert api.get(f"/api/v1/alert-rules/{rule['id']}").json()["last_evaluated_at"] == "2026-11-20T09:07:00Z"
    evaluate(30)
    assert states(alert_events) == ["firing", "resolved"]


def test_for_is_honoured_across_a_gap_in_evaluations(create_rule, fused_traffic, evaluate, alert_events, api):
    create_rule(conditions=FUSE_RULE, **{"for": "5m"})
    evaluate(1)
    evaluate(3)
    assert states(alert_events) == []
    evaluate(6)
    assert states(alert_events) == ["firing"]


def test_a_disabled_rule_is_not_evaluated_and_starts_afresh(create_rule, fused_traffic, evaluate, alert_events, api):
    rule = create_rule(conditions=FUSE_RULE)
    evaluate(1)
    api.patch(f"/api/v1/alert-rules/{rule['id']}", {"enabled": False}, format="json")
    evaluate(2)
    assert api.get(f"/api/v1/alert-rules/{rule['id']}").json()["state"] == "ok"
    api.patch(f"/api/v1/alert-rules/{rule['id']}", {"enabled": True}, format="json")
    evaluate(3)
    assert states(alert_events) == ["firing", "firing"]


def test_health_findings_come_from_the_newest_health_report(create_rule, ingest, evaluate, alert_events):
    create_rule(conditions=[{"metric": "health_findings", "window": "1m", "op": ">", "threshold": 0}])
    evaluate(1)
    assert states(alert_events) == []
    # A node whose parent never arrives: a broken link once the grace period is over.
    ingest(node_event("child", "t1", parents=["ghost"], seconds=0), node_event("other", "t1", seconds=1))
    call_command("check_dag_health", "--now", at_minute(60).isoformat(), stdout=io.StringIO())
    evaluate(61)
    events = alert_events()
    assert [e["state"] for e in events] == ["firing"]
    assert events[0]["values"][0]["metric"] == "health_findings"
    assert events[0]["values"][0]["value"] >= 1


def test_one_tick_costs_the_same_queries_for_few_or_many_rules(create_rule, fused_traffic, evaluate,
                                                                django_assert_max_num_queries):
    windows = ["5m", "10m", "15m"]
    for i in range(3):
        create_rule(name=f"r{i}", conditions=[{**FUSE_RULE[0], "window": windows[i % 3]}])
    with CaptureQueriesContext(connection) as few_rules:
        evaluate(1)
    few = len(few_rules.captured_queries)
    for i in range(3, 60):
        create_rule(name=f"r{i}", conditions=[{**FUSE_RULE[0], "window": windows[i % 3], "threshold": i / 100}])
    with django_assert_max_num_queries(few):
        evaluate(2)


@pytest.mark.django_db(transaction=True)
def test_two_ticks_at_once_notify_once(make_project, receiver):
    """Two runners (threads with their own connections) evaluate the same minute
    at the same moment: each rule fires once and each webhook is sent once."""
    from alerts import alert_rules
    from alerts.serializers import AlertRuleSerializer
    from provenance.ingest.write import ingest_events

    project, _ = make_project("race")
    ingest_events(project, [node_event(f"f{i}", f"t{i}", seconds=i, **FUSED) for i in range(3)])
    for i in range(20):
        data = AlertRuleSerializer(data={"name": f"r{i}", "conditions": FUSE_RULE, "destinations": [
            {"type": "webhook", "url": receiver.url}]})
        data.is_valid(raise_exception=True)
        alert_rules.create_rule(project, data.validated_data)

    run_at_once(2, lambda: evaluation.tick(at_minute(1)))
    assert AlertEvent.objects.filter(state="firing").count() == 20
    assert Delivery.objects.count() == 20
    received = receiver.wait_for(20)
    assert len(received) == 20
    assert len({r.headers["webhook-id"] for r in received}) == 20


def test_the_window_ends_at_the_evaluation_time(create_rule, ingest, evaluate, alert_events):
    """[now - window, now): a node stamped exactly `now` counts from the next tick on."""
    create_rule(conditions=[{"metric": "node_count", "window": "1m", "op": ">=", "threshold": 1}])
    ingest(node_event("edge", seconds=60))
    evaluate(1)
    assert states(alert_events) == []
    evaluate(2)
    assert states(alert_events) == ["firing"]


ROUTES = [{"type": "slack", "url": "https://hooks.slack.example/services/T/B/x"},
          {"type": "email", "to": ["oncall@example.org"]},
          {"type": "pagerduty", "routing_key": "R0UT1NGKEY"},
          {"type": "shared", "name": "on-call"}]


def test_a_tick_with_destinations_costs_the_same_queries_for_few_or_many_routed_rules(api, create_rule,
                                                                                      fused_traffic):
    """Silences and storm state are read and written per tick, never per rule, and
    the evaluation never reads a destination nor writes a delivery (its fan-out
    runs after it commits): it costs as many queries for 4 routed rules as for
    40; so does the fan-out."""
    assert api.post("/api/v1/destinations", {"name": "on-call", "type": "email", "to": ["team@example.org"]},
                    format="json").status_code == 201

    def routed(start: int, stop: int) -> None:
        for i in range(start, stop):
            create_rule(name=f"r{i}", conditions=[{**FUSE_RULE[0], "threshold": i / 100}],
                        destinations=[ROUTES[i % len(ROUTES)]])

    routed(0, 4)
    silenced = create_rule(name="silenced", conditions=FUSE_RULE, destinations=ROUTES[:1])
    assert api.post("/api/v1/silences", {"rule_id": silenced["id"], "until": "2099-01-01T00:00:00Z",
                                         "reason": "maintenance"}, format="json").status_code == 201
    with CaptureQueriesContext(connection) as few_rules:
        few_ids = evaluation.evaluate(at_minute(1))
    with CaptureQueriesContext(connection) as few_fan_out:
        notifications.fan_out(few_ids)
    routed(4, 40)
    with CaptureQueriesContext(connection) as many_rules:
        many_ids = evaluation.evaluate(at_minute(2))
    assert not Delivery.objects.filter(event_id__in=many_ids).exists()
    with CaptureQueriesContext(connection) as many_fan_out:
        notifications.fan_out(many_ids)
    assert (len(few_ids), len(many_ids)) == (4, 36)
    assert len(many_rules.captured_queries) == len(few_rules.captured_queries), (
        [q["sql"][:120] for q in many_rules.captured_queries])
    assert not [q["sql"] for q in many_rules.captured_queries
                if "alerts_destination" in q["sql"] or "alerts_delivery" in q["sql"]]
    assert len(many_fan_out.captured_queries) == len(few_fan_out.captured_queries)
    assert Delivery.objects.filter(status="pending", attempt_count=0).count() == 40
    assert set(Delivery.objects.values_list("kind", flat=True)) == {"alert.firing"}
    assert not Delivery.objects.filter(rule_id=silenced["id"]).exists()
    assert not AlertEvent.objects.filter(fan_out_pending=True).exists()
