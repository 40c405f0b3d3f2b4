"""`/api/v1/keys` (the contract's "Auth"): create (the secret shown once, stored
hashed), list without secrets, revoke (401 from the next request on), rotate
(the old key works through its grace, then 401); bad input is a 400 naming the
field and stores nothing; another project's key is a 404; every change is in
the audit log, without the secret."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from tenancy.models import ApiKey, AuditEntry, Membership, Role, hash_api_key
from tests.support.events import node_event


def keyed(raw: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def create(api, name="agent", scopes=("ingest",)):
    response = api.post("/api/v1/keys", {"name": name, "scopes": list(scopes)}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_a_created_key_is_shown_once_stored_hashed_and_does_what_its_scopes_allow(project, api):
    made = create(api, "support-agent", ["ingest"])

    assert {"id", "name", "scopes", "key", "created_at"} <= set(made)
    assert made["name"] == "support-agent" and made["scopes"] == ["ingest"]
    stored = ApiKey.objects.get(pk=made["id"])
    assert stored.key_hash == hash_api_key(made["key"]) and made["key"] not in (stored.prefix, stored.name)
    agent = keyed(made["key"])
    assert agent.post("/api/v1/ingest", {"batch": [node_event("p1")]}, format="json").status_code == 207
    assert agent.get("/api/v1/policy").status_code == 200
    assert agent.get("/api/v1/traces").status_code == 403
    listed = {k["id"]: k for k in api.get("/api/v1/keys").json()}
    assert "key" not in listed[made["id"]] and made["key"] not in str(listed)


def test_the_list_names_every_key_of_the_project_without_secrets(project, api, make_project):
    create(api, "one", ["read"])
    create(api, "two", ["ingest", "read"])
    other, _ = make_project("globex")
    other.issue_api_key("theirs")

    listed = api.get("/api/v1/keys").json()

    assert [k["name"] for k in listed] == ["two", "one", "default"]
    assert listed[0]["scopes"] == ["ingest", "read"] and listed[2]["scopes"] == ["ingest", "read", "admin"]
    for key in listed:
        assert {"id", "name", "scopes", "created_at", "last_used_at", "revoked", "expires_at", "prefix"} <= set(key)
        assert key["revoked"] is False and "key" not in key and "key_hash" not in key
    assert listed[2]["last_used_at"] is not None  # the fixture's key, used by this very request


def test_scopes_are_kept_once_each_in_the_contracts_order(api):
    assert create(api, "x", ["admin", "ingest", "admin"])["scopes"] == ["ingest", "admin"]


def test_a_revoked_key_gets_401_from_its_next_request(project, api):
    made = create(api, "ci", ["read"])
    ci = keyed(made["key"])
    assert ci.get("/api/v1/traces").status_code == 200

    assert api.delete(f"/api/v1/keys/{made['id']}").status_code == 204

    assert ci.get("/api/v1/traces").status_code == 401
    assert {k["id"]: k["revoked"] for k in api.get("/api/v1/keys").json()}[made["id"]] is True
    assert api.delete(f"/api/v1/keys/{made['id']}").status_code == 204  # again: nothing more happens
    assert AuditEntry.objects.filter(project=project, action="key.revoke").count() == 1


def test_a_key_may_revoke_itself(api):
    own = next(k for k in api.get("/api/v1/keys").json() if k["name"] == "default")

    assert api.delete(f"/api/v1/keys/{own['id']}").status_code == 204
    assert api.get("/api/v1/keys").status_code == 401


def test_rotation_gives_a_new_key_and_the_old_one_works_through_its_grace(project, api):
    made = create(api, "agent", ["ingest", "read"])
    old = keyed(made["key"])

    rotated = api.post(f"/api/v1/keys/{made['id']}/rotate", {"grace_seconds": 3600}, format="json")

    assert rotated.status_code == 201, rotated.content
    new = rotated.json()
    assert new["name"] == "agent" and new["scopes"] == ["ingest", "read"] and new["key"] != made["key"]
    assert new["id"] != made["id"] and new["replaces"] == made["id"]
    assert old.get("/api/v1/traces").status_code == 200
    assert keyed(new["key"]).get("/api/v1/traces").status_code == 200
    listed = {k["id"]: k for k in api.get("/api/v1/keys").json()}
    assert listed[made["id"]]["expires_at"] is not None and listed[made["id"]]["revoked"] is False

    # The grace ends (the clock moved on): the old key is refused like a revoked one.
    ApiKey.objects.filter(pk=made["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))

    assert old.get("/api/v1/traces").status_code == 401
    assert keyed(new["key"]).get("/api/v1/traces").status_code == 200
    assert {k["id"]: k for k in api.get("/api/v1/keys").json()}[made["id"]]["revoked"] is True


def test_rotation_without_grace_stops_the_old_key_at_once(api):
    made = create(api, "agent", ["read"])

    assert api.post(f"/api/v1/keys/{made['id']}/rotate", {"grace_seconds": 0}, format="json").status_code == 201

    assert keyed(made["key"]).get("/api/v1/traces").status_code == 401
    assert api.post(f"/api/v1/keys/{made['id']}/rotate", {}, format="json").status_code == 409


def test_every_key_change_is_audited_without_the_secret(project, api):
    made = create(api, "agent", ["ingest"])
    rotated = api.post(f"/api/v1/keys/{made['id']}/rotate", {"grace_seconds": 60}, format="json").json()
    api.delete(f"/api/v1/keys/{rotated['id']}")

    entries = list(AuditEntry.objects.filter(project=project).order_by("at", "id"))

    assert [e.action for e in entries] == ["key.create", "key.rotate", "key.revoke"]
    assert all(e.actor.startswith("key:") and e.actor_key is not None for e in entries)
    assert entries[1].detail["grace_seconds"] == 60
    for entry in entries:
        assert made["key"] not in str(entry.detail) + entry.object
        assert rotated["key"] not in str(entry.detail) + entry.object


@pytest.mark.parametrize(("body", "field"), [
    ({"name": "x", "scopes": ["write"]}, "scopes[0]"),
    ({"name": "x", "scopes": []}, "scopes"),
    ({"name": "x", "scopes": "read"}, "scopes"),
    ({"name": "x"}, "scopes"),
    ({"name": "x" * 101, "scopes": ["read"]}, "name"),
    ({"name": "   ", "scopes": ["read"]}, "name"),
    ({"name": 5, "scopes": ["read"]}, "name"),
    ({"scopes": ["read"]}, "name"),
    (["read"], "body"),
])
def test_bad_input_to_create_is_a_400_naming_the_field_and_stores_nothing(project, api, body, field):
    keys, entries = ApiKey.objects.count(), AuditEntry.objects.count()

    response = api.post("/api/v1/keys", body, format="json")

    assert response.status_code == 400, response.content
    assert field in response.json()["fields"]
    assert (ApiKey.objects.count(), AuditEntry.objects.count()) == (keys, entries)


def test_a_body_that_is_not_json_is_a_400(api):
    response = api.generic("POST", "/api/v1/keys", b"{name", content_type="application/json")

    assert response.status_code == 400 and response.json()["error"]


@pytest.mark.parametrize("grace", [-1, 10**12, 1.5, "60", True, None])
def test_a_bad_grace_is_a_400_naming_it_and_changes_nothing(api, grace):
    made = create(api, "agent", ["read"])

    response = api.post(f"/api/v1/keys/{made['id']}/rotate", {"grace_seconds": grace}, format="json")

    assert response.status_code == 400
    assert "grace_seconds" in response.json()["fields"]
    assert ApiKey.objects.get(pk=made["id"]).expires_at is None
    assert [k["name"] for k in api.get("/api/v1/keys").json()].count("agent") == 1


def test_another_projects_key_is_a_404(api, other_api):
    theirs = create(other_api, "theirs", ["read"])

    assert api.delete(f"/api/v1/keys/{theirs['id']}").status_code == 404
    assert api.post(f"/api/v1/keys/{theirs['id']}/rotate", {}, format="json").status_code == 404
    assert keyed(theirs["key"]).get("/api/v1/traces").status_code == 200
    assert theirs["id"] not in {k["id"] for k in api.get("/api/v1/keys").json()}


def test_a_project_admins_session_reads_the_keys_and_a_viewers_does_not(project, member_user):
    viewer = Client()
    viewer.force_login(member_user)
    refused = viewer.get("/api/v1/keys")
    assert refused.status_code == 403 and "admin" in refused.json()["error"]
    assert viewer.get("/api/v1/traces").status_code == 200

    Membership.objects.filter(project=project, user=member_user).update(role=Role.ADMIN)

    assert viewer.get("/api/v1/keys").status_code == 200
    assert viewer.post("/api/v1/keys", {"name": "x", "scopes": ["read"]},
                       content_type="application/json").status_code == 403


def test_staff_are_admins_of_every_project_through_their_session(project, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    staff = get_user_model().objects.create_user("root", password="pw-root-12345", is_staff=True)
    client = Client()
    client.force_login(staff)

    assert client.get(f"/api/v1/keys?project={project.slug}").status_code == 200
