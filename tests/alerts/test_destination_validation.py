"""Bad destinations are a 400 naming the field, and nothing is stored."""

import pytest

from alerts.models import AlertRule, Destination, SharedDestination

RULE = [{"metric": "fuse_rate", "window": "5m", "op": ">", "threshold": 0.2}]
GOOD_SLACK = {"type": "slack", "url": "https://hooks.slack.example/services/T0/B0/x"}


@pytest.mark.parametrize(("destination", "field", "says"), [
    ({"type": "email", "to": ["not-an-address"]}, "destinations[1].to[0]", "valid email address"),
    ({"type": "email", "to": []}, "destinations[1].to", "may not be empty"),
    ({"type": "pagerduty", "routing_key": ""}, "destinations[1].routing_key", "may not be blank"),
    ({"type": "pagerduty"}, "destinations[1].routing_key", "required"),
    ({"type": "slack", "url": "http://127.0.0.1:9/hook"}, "destinations[1].url", "WEBHOOK_ALLOW_PRIVATE=1"),
    ({"type": "slack", "url": "http://10.1.2.3/hook"}, "destinations[1].url", "private"),
    ({"type": "slack", "url": "ftp://hooks.slack.example/x"}, "destinations[1].url", "http"),
    ({"type": "slack", "url": GOOD_SLACK["url"], "channel": "#x"}, "destinations[1].channel", "unknown field"),
    ({"type": "sms", "to": "+1"}, "destinations[1].type", "unknown destination type"),
    ({"type": "shared", "name": "nobody"}, "destinations[1].name", "no project destination"),
])
def test_a_bad_destination_is_a_400_naming_it_and_nothing_is_stored(api, destination, field, says):
    response = api.post("/api/v1/alert-rules", {"name": "r", "conditions": RULE,
                                                "destinations": [GOOD_SLACK, destination]}, format="json")
    assert response.status_code == 400, response.content
    body = response.json()
    assert field in body["fields"], body
    assert says in body["fields"][field]
    assert body["error"].startswith(f"{field}: ")
    assert not AlertRule.objects.exists() and not Destination.objects.exists()


def test_a_loopback_webhook_is_refused_with_how_to_reach_a_local_receiver(api):
    response = api.post("/api/v1/alert-rules", {"name": "r", "conditions": RULE, "destinations": [
        {"type": "webhook", "url": "http://localhost:8000/hook"}]}, format="json")
    assert response.status_code == 400
    reason = response.json()["fields"]["destinations[0].url"]
    assert "inbox" in reason and "WEBHOOK_ALLOW_PRIVATE=1" in reason


def test_a_patch_with_a_bad_destination_changes_nothing(api):
    rule = api.post("/api/v1/alert-rules", {"name": "r", "conditions": RULE, "destinations": [GOOD_SLACK]},
                    format="json").json()
    response = api.patch(f"/api/v1/alert-rules/{rule['id']}", {"name": "renamed", "destinations": [
        {"type": "email", "to": ["oncall@example.org", "nope"]}]}, format="json")
    assert response.status_code == 400
    assert "destinations[0].to[1]" in response.json()["fields"]
    after = api.get(f"/api/v1/alert-rules/{rule['id']}").json()
    assert after["name"] == "r" and [d["type"] for d in after["destinations"]] == ["slack"]


@pytest.mark.parametrize(("body", "field"), [
    ({"name": "on-call", "type": "email", "to": ["not-an-address"]}, "to[0]"),
    ({"name": "on-call", "type": "pagerduty", "routing_key": ""}, "routing_key"),
    ({"name": "on-call", "type": "slack", "url": "http://192.168.1.5/x"}, "url"),
    ({"name": "", "type": "slack", "url": GOOD_SLACK["url"]}, "name"),
    ({"name": "on-call", "type": "shared", "name2": "x"}, "type"),
])
def test_a_bad_project_destination_is_a_400_naming_it(api, body, field):
    response = api.post("/api/v1/destinations", body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["fields"], response.json()
    assert not SharedDestination.objects.exists()


def test_project_destination_names_are_unique(api):
    assert api.post("/api/v1/destinations", {"name": "on-call", **GOOD_SLACK}, format="json").status_code == 201
    response = api.post("/api/v1/destinations", {"name": "on-call", **GOOD_SLACK}, format="json")
    assert response.status_code == 400 and "already has" in response.json()["fields"]["name"]


@pytest.mark.parametrize("body", [[None, None], "text", 3, None])
def test_a_project_destination_that_is_not_an_object_is_a_400(api, body):
    response = api.post("/api/v1/destinations", body, format="json")
    assert response.status_code == 400, response.content
    assert not SharedDestination.objects.exists()
