"""Project-wide destinations: rules pick one by name, so changing the on-call
address is one edit; another project's destinations are invisible."""

from alerts.models import Delivery
from tests.support.events import node_event

FUSED = {"fuse": {"decision": "block", "reason": "low"}}
RULE = [{"metric": "fuse_rate", "window": "5m", "op": ">", "threshold": 0.2}]


def test_rules_send_through_a_shared_destination_and_one_edit_moves_them_all(api, create_rule, ingest, smtp,
                                                                             evaluate):
    shared = api.post("/api/v1/destinations", {"name": "on-call", "type": "email", "to": ["old@example.org"]},
                      format="json")
    assert shared.status_code == 201, shared.content
    first = create_rule(name="first", conditions=RULE, destinations=[{"type": "shared", "name": "on-call"}])
    second = create_rule(name="second", conditions=RULE, destinations=[{"type": "shared", "name": "on-call"}])
    assert first["destinations"][0]["type"] == "shared" and first["destinations"][0]["kind"] == "email"
    ingest(node_event("f1", "t1", seconds=10, **FUSED))
    evaluate(1)
    assert sorted(message["Subject"] for _, _, message in smtp.messages) == ["[Denoise] firing: first",
                                                                            "[Denoise] firing: second"]
    assert {tuple(to) for _, to, _ in smtp.messages} == {("old@example.org",)}

    edited = api.put(f"/api/v1/destinations/{shared.json()['id']}",
                     {"name": "on-call", "type": "email", "to": ["new@example.org"]}, format="json")
    assert edited.status_code == 200, edited.content
    assert edited.json()["rules"] == sorted([first["id"], second["id"]])
    evaluate(10)
    assert {tuple(to) for _, to, _ in smtp.messages[2:]} == {("new@example.org",)}
    assert len(smtp.messages) == 4
    assert set(Delivery.objects.values_list("status", flat=True)) == {"delivered"}


def test_a_deleted_shared_destination_leaves_its_rules(api, create_rule):
    shared = api.post("/api/v1/destinations", {"name": "chat", "type": "slack",
                                               "url": "https://hooks.slack.example/services/x"}, format="json").json()
    rule = create_rule(conditions=RULE, destinations=[{"type": "shared", "name": "chat"}])
    assert api.delete(f"/api/v1/destinations/{shared['id']}").status_code == 204
    assert api.get(f"/api/v1/alert-rules/{rule['id']}").json()["destinations"] == []


def test_another_projects_destinations_are_invisible(api, other_api, create_rule):
    shared = api.post("/api/v1/destinations", {"name": "chat", "type": "slack",
                                               "url": "https://hooks.slack.example/services/x"}, format="json").json()
    assert other_api.get(f"/api/v1/destinations/{shared['id']}").status_code == 404
    assert other_api.get("/api/v1/destinations").json() == []
    response = other_api.post("/api/v1/alert-rules", {"name": "r", "conditions": RULE, "destinations": [
        {"type": "shared", "name": "chat"}]}, format="json")
    assert response.status_code == 400 and "destinations[0].name" in response.json()["fields"]
