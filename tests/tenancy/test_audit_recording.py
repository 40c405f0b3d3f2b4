"""Every change made through the API writes exactly one audit entry, in the
change's transaction: the acting key, the action, the object and only the
fields that changed; a refused change (400) writes none."""

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from tenancy.models import ApiKey, AuditEntry
from tests.support.alerts import SECRET

RULE = {"name": "fuse storm", "conditions": [{"metric": "fuse_rate", "window": "5m", "op": ">", "threshold": 0.2}],
        "destinations": [{"type": "webhook", "url": "https://example.org/hook", "secret": SECRET}]}
TUNED = {"default": {"accept": 0.85, "block": 0.4}}


@pytest.fixture
def key_label(project):
    key = ApiKey.objects.get(project=project)
    return f"key:{key.prefix}… ({key.name})"


def only_entry(project, **expected):
    """The one entry the change wrote (the log held none before)."""
    [entry] = AuditEntry.objects.filter(project=project)
    for field, value in expected.items():
        assert getattr(entry, field) == value, (field, getattr(entry, field))
    return entry


def changed(entry) -> dict:
    return entry.detail["changed"]


def created_rule(api) -> dict:
    response = api.post("/api/v1/alert-rules", RULE, format="json")
    assert response.status_code == 201, response.content
    AuditEntry.objects.all().delete()
    return response.json()


def test_creating_a_rule_records_its_fields_and_the_acting_key(api, project, key_label):
    rule = api.post("/api/v1/alert-rules", RULE, format="json").json()

    entry = only_entry(project, action="alert_rule.create", actor=key_label, object_type="alert_rule",
                       object_id=str(rule["id"]))
    assert entry.actor_key == ApiKey.objects.get(project=project) and entry.actor_user is None
    assert changed(entry)["name"] == {"before": None, "after": "fuse storm"}
    assert changed(entry)["conditions"]["after"] == RULE["conditions"]
    assert changed(entry)["destinations"]["after"] == ["webhook https://example.org/hook"]
    assert SECRET not in str(entry.detail)  # a destination's secret is never copied into the log


def test_updating_a_rule_records_only_what_changed(api, project, key_label):
    rule = created_rule(api)

    assert api.patch(f"/api/v1/alert-rules/{rule['id']}", {"name": "renamed", "enabled": False},
                     format="json").status_code == 200

    entry = only_entry(project, action="alert_rule.update", actor=key_label, object_id=str(rule["id"]))
    assert changed(entry) == {"name": {"before": "fuse storm", "after": "renamed"},
                              "enabled": {"before": True, "after": False}}


def test_replacing_a_rules_destinations_records_them_by_target(api, project):
    rule = created_rule(api)

    api.patch(f"/api/v1/alert-rules/{rule['id']}", {"destinations": [{"type": "email", "to": ["ops@example.org"]}]},
              format="json")

    entry = only_entry(project, action="alert_rule.update")
    assert changed(entry) == {"destinations": {"before": ["webhook https://example.org/hook"],
                                               "after": ["email ops@example.org"]}}


def test_an_update_that_changes_nothing_records_nothing(api, project):
    rule = created_rule(api)

    assert api.patch(f"/api/v1/alert-rules/{rule['id']}", {"name": "fuse storm"}, format="json").status_code == 200

    assert not AuditEntry.objects.exists()


def test_deleting_a_rule_records_what_it_was(api, project, key_label):
    rule = created_rule(api)

    assert api.delete(f"/api/v1/alert-rules/{rule['id']}").status_code == 204

    entry = only_entry(project, action="alert_rule.delete", actor=key_label, object_id=str(rule["id"]))
    assert changed(entry)["name"] == {"before": "fuse storm", "after": None}


@pytest.mark.parametrize("method, path, body", [
    ("post", "/api/v1/alert-rules", {**RULE, "conditions": [{"metric": "nope", "window": "5m", "op": ">",
                                                             "threshold": 1}]}),
    ("post", "/api/v1/destinations", {"name": "x", "type": "email", "to": "not a list"}),
    ("post", "/api/v1/silences", {"until": "2000-01-01T00:00:00Z", "reason": "past"}),
    ("put", "/api/v1/policy", {"profiles": {"default": {"accept": 2}}}),
    ("post", "/api/v1/datasets", {"name": "../bad"}),
    ("patch", "/api/v1/project", {"retention": {"trace_days": -1}}),
])
def test_a_refused_change_records_nothing(api, project, method, path, body):
    response = getattr(api, method)(path, body, format="json")

    assert response.status_code == 400, response.content
    assert not AuditEntry.objects.exists()


def test_a_refused_rule_update_records_nothing(api, project):
    rule = created_rule(api)

    assert api.patch(f"/api/v1/alert-rules/{rule['id']}", {"for": "99d"}, format="json").status_code == 400

    assert not AuditEntry.objects.exists()


def test_shared_destinations_record_create_update_and_delete(api, project, key_label):
    made = api.post("/api/v1/destinations", {"name": "on-call", "type": "email", "to": ["old@example.org"]},
                    format="json").json()
    entry = only_entry(project, action="destination.create", actor=key_label, object_id=str(made["id"]))
    assert changed(entry)["target"] == {"before": None, "after": "old@example.org"}
    AuditEntry.objects.all().delete()

    api.put(f"/api/v1/destinations/{made['id']}", {"name": "on-call", "type": "email", "to": ["new@example.org"]},
            format="json")
    entry = only_entry(project, action="destination.update", actor=key_label)
    assert changed(entry) == {"target": {"before": "old@example.org", "after": "new@example.org"}}
    AuditEntry.objects.all().delete()

    assert api.delete(f"/api/v1/destinations/{made['id']}").status_code == 204
    only_entry(project, action="destination.delete", actor=key_label, object="destination "
               f"{made['id']}: on-call")


def test_silences_record_their_creation_and_their_end(api, project, key_label):
    until = (timezone.now() + timedelta(days=1)).replace(microsecond=0)
    made = api.post("/api/v1/silences", {"until": until.isoformat(), "reason": "reindex"}, format="json").json()
    entry = only_entry(project, action="silence.create", actor=key_label, object_type="silence",
                       object_id=str(made["id"]))
    assert changed(entry)["reason"] == {"before": None, "after": "reindex"}
    AuditEntry.objects.all().delete()

    assert api.delete(f"/api/v1/silences/{made['id']}").status_code == 204

    entry = only_entry(project, action="silence.end", actor=key_label)
    assert list(changed(entry)) == ["ended_at"] and changed(entry)["ended_at"]["before"] is None


def test_a_policy_change_records_the_thresholds_that_moved(api, project, key_label):
    response = api.put("/api/v1/policy", {"profiles": TUNED, "note": "stricter"}, format="json")
    assert response.status_code == 200, response.content

    entry = only_entry(project, action="policy.update", actor=key_label, object_type="policy")
    assert changed(entry) == {"version": {"before": 0, "after": 1},
                              "default.accept": {"before": 0.8, "after": 0.85},
                              "default.block": {"before": 0.5, "after": 0.4}}
    assert entry.detail["note"] == "stricter"


def test_a_policy_rollback_is_recorded_as_one(api, project, key_label):
    api.put("/api/v1/policy", {"profiles": TUNED}, format="json")
    AuditEntry.objects.all().delete()

    assert api.post("/api/v1/policy/rollback", {"version": 0}, format="json").status_code == 200

    entry = only_entry(project, action="policy.rollback", actor=key_label)
    assert changed(entry)["default.block"] == {"before": 0.4, "after": 0.5}


def test_datasets_record_creation_new_versions_and_removed_items(api, project, key_label):
    assert api.post("/api/v1/datasets", {"name": "golden"}, format="json").status_code == 201
    entry = only_entry(project, action="dataset.create", actor=key_label, object="dataset golden")
    assert changed(entry)["name"] == {"before": None, "after": "golden"}
    AuditEntry.objects.all().delete()

    api.post("/api/v1/datasets/golden/items", {"items": [{"id": "q1", "expected": 1}, {"id": "q2", "expected": 2}]},
             format="json")
    entry = only_entry(project, action="dataset.update", actor=key_label)
    assert changed(entry) == {"version": {"before": 0, "after": 1}, "item_count": {"before": 0, "after": 2}}
    assert entry.detail["created"] == 2
    AuditEntry.objects.all().delete()

    api.post("/api/v1/datasets/golden/items", {"items": [{"id": "q1", "expected": 1}]}, format="json")
    assert not AuditEntry.objects.exists()  # nothing changed: no version, no entry

    assert api.delete("/api/v1/datasets/golden/items/q2").status_code == 200
    entry = only_entry(project, action="dataset.item_delete", actor=key_label)
    assert changed(entry)["item_count"] == {"before": 2, "after": 1}
    AuditEntry.objects.all().delete()

    assert api.post("/api/v1/datasets/golden/rollback", {"version": 1}, format="json").status_code == 200
    entry = only_entry(project, action="dataset.rollback", actor=key_label)
    assert changed(entry)["item_count"] == {"before": 1, "after": 2}


def test_project_settings_record_each_changed_setting(api, project, key_label):
    response = api.patch("/api/v1/project", {"high_uncertainty_threshold": 0.3, "retention": {"trace_days": 30},
                                             "prices": {"gpt-4o": {"input_per_mtok": 2.5, "output_per_mtok": 10}}},
                         format="json")
    assert response.status_code == 200, response.content

    entry = only_entry(project, action="project.update", actor=key_label, object_type="project")
    assert changed(entry) == {
        "high_uncertainty_threshold": {"before": 0.5, "after": 0.3},
        "retention.trace_days": {"before": None, "after": 30},
        "prices.gpt-4o.input_per_mtok": {"before": None, "after": 2.5},
        "prices.gpt-4o.output_per_mtok": {"before": None, "after": 10},
    }


def test_a_second_key_is_named_as_the_actor(project):
    key, raw = project.issue_api_key("deploy-bot")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")

    client.patch("/api/v1/project", {"name": "Acme"}, format="json")

    entry = only_entry(project, action="project.update", actor_key=key)
    assert entry.actor == f"key:{key.prefix}… (deploy-bot)"
