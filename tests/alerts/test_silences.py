"""Silences through the API: per rule or project-wide, with an end time and a
reason; state changes during one are recorded `silenced: true` and never
delivered, then or later, to any kind of destination."""

from datetime import timedelta

import pytest
from django.utils import timezone

from alerts.models import Delivery
from tests.support.alerts import SECRET, at_minute
from tests.support.events import node_event


@pytest.fixture
def member_role():
    """These tests change things from the pages: an editor may."""
    return "editor"


FUSED = {"fuse": {"decision": "block", "reason": "low"}}
RULE = [{"metric": "fuse_rate", "window": "5m", "op": ">", "threshold": 0.2}]


def future(days=3650) -> str:
    return (timezone.now() + timedelta(days=days)).isoformat()


@pytest.fixture
def every_kind(receiver, slack, pagerduty, smtp):
    def received() -> list[int]:
        return [len(receiver.received), len(slack.received), len(pagerduty.received), len(smtp.messages)]

    destinations = [{"type": "webhook", "url": receiver.url, "secret": SECRET}, {"type": "slack", "url": slack.url},
                    {"type": "pagerduty", "routing_key": "KEY"}, {"type": "email", "to": ["oncall@example.org"]}]
    return destinations, received


def test_the_silence_api_shapes(api, create_rule):
    rule = create_rule(conditions=RULE)
    until = future()
    response = api.post("/api/v1/silences", {"rule_id": rule["id"], "until": until, "reason": "reindex"},
                        format="json")
    assert response.status_code == 201, response.content
    created = response.json()
    assert {k: created[k] for k in ("rule_id", "reason")} == {"rule_id": rule["id"], "reason": "reindex"}
    assert isinstance(created["id"], int) and created["until"].startswith(until[:16])
    assert created["created_by"].startswith("api-key:")
    project_wide = api.post("/api/v1/silences", {"until": until, "reason": "maintenance"}, format="json").json()
    assert project_wide["rule_id"] is None
    assert [s["id"] for s in api.get("/api/v1/silences").json()] == [created["id"], project_wide["id"]]
    assert api.delete(f"/api/v1/silences/{created['id']}").status_code == 204
    assert [s["id"] for s in api.get("/api/v1/silences").json()] == [project_wide["id"]]
    assert api.delete(f"/api/v1/silences/{created['id']}").status_code == 404, "already ended"


@pytest.mark.parametrize(("body", "field"), [
    ({"reason": "x"}, "until"),
    ({"until": "2020-01-01T00:00:00Z", "reason": "x"}, "until"),
    ({"until": "tomorrow", "reason": "x"}, "until"),
    ({"until": "2300-01-01T00:00:00Z", "reason": "x"}, "until"),
    ({"until": future()}, "reason"),
    ({"until": future(), "reason": ""}, "reason"),
    ({"until": future(), "reason": "x", "rule_id": 999999}, "rule_id"),
    ({"until": future(), "reason": "x", "rule": 1}, "rule"),
])
def test_a_bad_silence_is_a_400_naming_the_field(api, body, field):
    response = api.post("/api/v1/silences", body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["fields"]
    assert api.get("/api/v1/silences").json() == []


def test_another_projects_rule_and_silences_are_out_of_reach(api, other_api, create_rule):
    rule = create_rule(conditions=RULE)
    response = other_api.post("/api/v1/silences", {"rule_id": rule["id"], "until": future(), "reason": "x"},
                              format="json")
    assert response.status_code == 400 and "rule_id" in response.json()["fields"]
    mine = api.post("/api/v1/silences", {"until": future(), "reason": "x"}, format="json").json()
    assert other_api.delete(f"/api/v1/silences/{mine['id']}").status_code == 404
    assert other_api.get("/api/v1/silences").json() == []


@pytest.mark.parametrize("project_wide", [False, True])
def test_a_silence_holds_back_every_kind_and_nothing_is_sent_later(api, create_rule, ingest, evaluate, every_kind,
                                                                    alert_events, project_wide):
    destinations, received = every_kind
    rule = create_rule(conditions=RULE, destinations=destinations)
    silence = api.post("/api/v1/silences", {**({} if project_wide else {"rule_id": rule["id"]}),
                                            "until": future(), "reason": "planned reindex"}, format="json").json()
    ingest(node_event("f1", "t1", seconds=10, **FUSED))
    evaluate(1)
    evaluate(3)
    assert received() == [0, 0, 0, 0]
    assert [(e["state"], e["silenced"]) for e in alert_events()] == [("firing", True)]
    assert api.delete(f"/api/v1/silences/{silence['id']}").status_code == 204
    evaluate(4)
    evaluate(7)
    assert received() == [0, 0, 0, 0], "a state change during the silence is not delivered later"
    assert [(e["state"], e["silenced"]) for e in alert_events()] == [("resolved", False), ("firing", True)]
    assert not Delivery.objects.exists(), "its resolution says nothing anyone was told: held back"

    ingest(node_event("f2", "t2", seconds=600, **FUSED))
    evaluate(11)
    assert received() == [1, 1, 1, 1], "after the silence, a new state change goes out to every kind"


def test_a_silence_of_another_rule_does_not_hold_this_one(api, create_rule, ingest, evaluate, receiver):
    quiet = create_rule(name="quiet", conditions=RULE)
    create_rule(name="loud", conditions=RULE, destinations=[{"type": "webhook", "url": receiver.url,
                                                              "secret": SECRET}])
    api.post("/api/v1/silences", {"rule_id": quiet["id"], "until": future(), "reason": "x"}, format="json")
    ingest(node_event("f1", "t1", seconds=10, **FUSED))
    evaluate(1)
    assert len(receiver.received) == 1


def test_an_expired_silence_holds_nothing(api, create_rule, ingest, evaluate, receiver):
    from alerts.models import Silence

    create_rule(conditions=RULE, destinations=[{"type": "webhook", "url": receiver.url, "secret": SECRET}])
    api.post("/api/v1/silences", {"until": future(), "reason": "x"}, format="json")
    Silence.objects.update(until=at_minute(0.5))  # ended before the evaluation at minute 1
    ingest(node_event("f1", "t1", seconds=10, **FUSED))
    evaluate(1)
    assert len(receiver.received) == 1


def test_the_silences_page_silences_ends_and_the_rule_list_and_history_say_by_whom(member, member_user, api,
                                                                                  create_rule, ingest, evaluate):
    rule = create_rule(name="extraction", conditions=RULE)
    response = member.post("/alerts/acme/silences/", {"rule_id": str(rule["id"]), "minutes": "60", "until": "",
                                                      "reason": "planned <reindex>"})
    assert response.status_code == 302
    [silence] = api.get("/api/v1/silences").json()
    assert silence["rule_id"] == rule["id"] and silence["created_by"] == member_user.get_username()
    listing = member.get("/alerts/acme/").content.decode()
    assert f"by {member_user.get_username()}" in listing and "silenced until" in listing
    assert "planned &lt;reindex&gt;" in listing, "the reason is escaped"

    ingest(node_event("f1", "t1", seconds=10, **FUSED))
    evaluate(1)
    history = member.get("/alerts/acme/history/").content.decode()
    assert f"silenced by {member_user.get_username()}: not sent" in history

    bad = member.post("/alerts/acme/silences/", {"rule_id": "", "minutes": "", "until": "2001-01-01T00:00",
                                                 "reason": "x"})
    assert "<code>until</code>: must be in the future" in bad.content.decode()
    member.post(f"/alerts/acme/silences/{silence['id']}/end/")
    assert api.get("/api/v1/silences").json() == []
    assert "Nothing is silenced." in member.get("/alerts/acme/silences/").content.decode()
