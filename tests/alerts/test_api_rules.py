"""`/api/v1/alert-rules` and `/api/v1/alerts` through HTTP: CRUD, project
isolation, and 400s that name the field and the reason."""

import pytest
from rest_framework.test import APIClient

from tests.support.alerts import SECRET

CONTRACT_EXAMPLE = {
    "name": "extraction degrading",
    "match": "all",
    "conditions": [
        {"metric": "high_uncertainty_ratio", "window": "15m", "change": "relative", "op": ">", "threshold": 0.5},
        {"metric": "failure_rate", "window": "15m", "filters": {"step": "entity_extraction"}, "op": ">",
         "threshold": 0.7},
    ],
    "for": "0m",
    "destinations": [{"type": "webhook", "url": "https://example.org/hook", "secret": SECRET}],
}


def test_the_contract_example_round_trips(api):
    created = api.post("/api/v1/alert-rules", CONTRACT_EXAMPLE, format="json")
    assert created.status_code == 201, created.content
    rule = created.json()
    for key in ("name", "match", "conditions", "for"):
        assert rule[key] == CONTRACT_EXAMPLE[key]
    assert rule["destinations"][0]["type"] == "webhook"
    assert rule["destinations"][0]["url"] == "https://example.org/hook"
    assert rule["destinations"][0]["secret"] == SECRET
    assert rule["enabled"] is True and rule["state"] == "ok"

    assert api.get(f"/api/v1/alert-rules/{rule['id']}").json() == rule
    assert [r["id"] for r in api.get("/api/v1/alert-rules").json()] == [rule["id"]]


def test_patch_changes_only_what_it_names(api, create_rule):
    rule = create_rule(**CONTRACT_EXAMPLE)
    patched = api.patch(f"/api/v1/alert-rules/{rule['id']}", {"name": "renamed", "for": "5m", "enabled": False},
                        format="json")
    assert patched.status_code == 200, patched.content
    body = patched.json()
    assert (body["name"], body["for"], body["enabled"]) == ("renamed", "5m", False)
    assert body["conditions"] == CONTRACT_EXAMPLE["conditions"]
    assert body["destinations"][0]["id"] == rule["destinations"][0]["id"]

    new_conditions = [{"metric": "fuse_rate", "window": "30s", "op": ">=", "threshold": 0.2}]
    body = api.patch(f"/api/v1/alert-rules/{rule['id']}", {"conditions": new_conditions, "destinations": []},
                     format="json").json()
    assert body["conditions"] == new_conditions
    assert body["destinations"] == []


def test_delete_removes_the_rule(api, create_rule):
    rule = create_rule(**CONTRACT_EXAMPLE)
    assert api.delete(f"/api/v1/alert-rules/{rule['id']}").status_code == 204
    assert api.get(f"/api/v1/alert-rules/{rule['id']}").status_code == 404
    assert api.get("/api/v1/alert-rules").json() == []


def test_another_projects_rule_answers_404(api, other_api, create_rule):
    rule = create_rule(**CONTRACT_EXAMPLE)
    url = f"/api/v1/alert-rules/{rule['id']}"
    assert other_api.get(url).status_code == 404
    assert other_api.patch(url, {"name": "mine now"}, format="json").status_code == 404
    assert other_api.delete(url).status_code == 404
    assert other_api.get("/api/v1/alert-rules").json() == []
    assert api.get(url).json()["name"] == "extraction degrading"


def test_a_missing_key_answers_401(db):
    assert APIClient().get("/api/v1/alert-rules").status_code == 401
    assert APIClient().get("/api/v1/alerts").status_code == 401


def condition(**changes):
    return {**{"metric": "fuse_rate", "window": "15m", "op": ">", "threshold": 0.2}, **changes}


def with_condition(**changes):
    return {**CONTRACT_EXAMPLE, "conditions": [condition(**changes)]}


def with_destination(**destination):
    return {**CONTRACT_EXAMPLE, "destinations": [{"type": "webhook", "url": "https://example.org/h", **destination}]}


INVALID = [
    ({k: v for k, v in CONTRACT_EXAMPLE.items() if k != "name"}, "name", "required"),
    ({**CONTRACT_EXAMPLE, "match": "some"}, "match", "not a valid choice"),
    ({**CONTRACT_EXAMPLE, "conditions": []}, "conditions", "empty"),
    ({k: v for k, v in CONTRACT_EXAMPLE.items() if k != "conditions"}, "conditions", "required"),
    (with_condition(metric="latency"), "conditions[0].metric", "not a valid choice"),
    (with_condition(window="15"), "conditions[0].window", "duration"),
    (with_condition(window="0m"), "conditions[0].window", "longer than 0s"),
    (with_condition(window="90d"), "conditions[0].window", "at most 31d"),
    (with_condition(op="="), "conditions[0].op", "not a valid choice"),
    (with_condition(threshold="high"), "conditions[0].threshold", "valid number"),
    (with_condition(threshold=None), "conditions[0].threshold", "null"),
    (with_condition(change="absolute"), "conditions[0].change", "not a valid choice"),
    (with_condition(filters={"agent": "a"}), "conditions[0].filters.agent", "unknown field"),
    (with_condition(filters={"rounds": 2}), "conditions[0].filters.rounds", "unknown field"),
    (with_condition(thresold=0.3), "conditions[0].thresold", "unknown field"),
    ({**CONTRACT_EXAMPLE, "for": "5 minutes"}, "for", "duration"),
    ({**CONTRACT_EXAMPLE, "destinations": [{"type": "sms", "to": "+15550100"}]}, "destinations[0].type",
     "unknown destination type"),
    ({**CONTRACT_EXAMPLE, "destinations": [{"type": "email", "to": "x@example.org"}]}, "destinations[0].to",
     "Expected a list"),
    ({**CONTRACT_EXAMPLE, "destinations": ["https://example.org"]}, "destinations[0]", "object"),
    (with_destination(url="ftp://example.org/h"), "destinations[0].url", "only http and https"),
    (with_destination(url="http://127.0.0.1:9/h"), "destinations[0].url", "loopback"),
    (with_destination(url="http://169.254.169.254/"), "destinations[0].url", "link-local"),
    (with_destination(url="http://10.1.2.3/"), "destinations[0].url", "private"),
    (with_destination(secret="whsec_not base64!"), "destinations[0].secret", "base64"),
    ({**CONTRACT_EXAMPLE, "muted_until": "tomorrow"}, "muted_until", "Datetime"),
    ({**CONTRACT_EXAMPLE, "enabled": "perhaps"}, "enabled", "valid boolean"),
]


@pytest.mark.parametrize("body,field,reason", INVALID, ids=[f"{f}:{r}" for _, f, r in INVALID])
def test_invalid_rules_answer_400_naming_the_field_and_reason(api, body, field, reason):
    response = api.post("/api/v1/alert-rules", body, format="json")
    assert response.status_code == 400, response.content
    error = response.json()
    assert field in error["fields"], error
    assert reason.lower() in error["fields"][field].lower()
    assert f"{field}: " in error["error"]
    assert api.get("/api/v1/alert-rules").json() == [], "nothing stored"


def test_a_bad_patch_changes_nothing(api, create_rule):
    rule = create_rule(**CONTRACT_EXAMPLE)
    response = api.patch(f"/api/v1/alert-rules/{rule['id']}",
                         {"name": "new", "conditions": [condition(op="~")]}, format="json")
    assert response.status_code == 400
    assert "conditions[0].op" in response.json()["fields"]
    assert api.get(f"/api/v1/alert-rules/{rule['id']}").json() == rule


def test_private_destinations_are_accepted_when_allowed(api, settings):
    settings.WEBHOOK_ALLOW_PRIVATE = True
    response = api.post("/api/v1/alert-rules", with_destination(url="http://127.0.0.1:8141/hook"), format="json")
    assert response.status_code == 201, response.content


def test_alert_events_are_listed_newest_first_and_scoped(api, other_api, create_rule, ingest, evaluate):
    from tests.support.events import node_event

    silence = create_rule(name="silence", conditions=[{"metric": "node_count", "window": "5m", "op": "<",
                                                       "threshold": 1}])
    evaluate(0)  # empty window: fires
    ingest(node_event("n1", seconds=30))
    evaluate(1)  # resolves
    events = api.get("/api/v1/alerts").json()
    assert [(e["rule_id"], e["state"]) for e in events] == [(silence["id"], "resolved"), (silence["id"], "firing")]
    assert events[0]["at"] == "2026-11-20T09:01:00Z"
    assert events[0]["values"] == [{"metric": "node_count", "value": 1}]
    assert api.get("/api/v1/alerts", {"limit": 1}).json() == events[:1]
    assert api.get("/api/v1/alerts", {"state": "firing"}).json() == events[1:]
    assert api.get("/api/v1/alerts", {"rule_id": silence["id"] + 1000}).json() == []
    assert other_api.get("/api/v1/alerts").json() == []
    bad = api.get("/api/v1/alerts", {"limit": 0})
    assert bad.status_code == 400 and "limit" in bad.json()["fields"]
