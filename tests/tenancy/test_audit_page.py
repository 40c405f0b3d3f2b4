"""The Audit log page under the project's settings: a change made on the
settings page is recorded with the person who made it; admins read the log
with filters and pages, escaped; anyone else gets a 403 in plain words."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tenancy.models import AuditEntry, Membership, Role

pytestmark = pytest.mark.django_db


@pytest.fixture
def person(project, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

    def make(role: str = Role.ADMIN, name: str = "ada", **flags) -> Client:
        user = get_user_model().objects.create_user(name, password="pw-12345-long", **flags)
        Membership.objects.create(project=project, user=user, role=role)
        client = Client()
        client.force_login(user)
        return client

    return make


def audit_url(project) -> str:
    return f"/p/{project.slug}/settings/audit/"


def save_settings(client, project, threshold: str, trace_days: str = ""):
    return client.post(f"/p/{project.slug}/settings/", {
        "high_uncertainty_threshold": threshold, "trace_days": trace_days, "full_content_days": "",
        "keep_full_below": "0.8", "save": "1"})


def test_a_change_on_the_settings_page_is_recorded_with_the_person(person, project):
    admin = person(is_staff=True)

    response = save_settings(admin, project, "0.4", "30")

    assert response.status_code == 302
    [entry] = AuditEntry.objects.filter(project=project)
    assert (entry.actor, entry.action, entry.actor_user.username) == ("user:ada", "project.update", "ada")
    assert entry.detail["changed"] == {"high_uncertainty_threshold": {"before": 0.5, "after": 0.4},
                                       "retention.trace_days": {"before": None, "after": 30}}
    page = admin.get(audit_url(project)).content.decode()
    assert "project.update" in page and "retention.trace_days" in page and "user:ada" in page


def test_a_refused_settings_change_is_not_recorded(person, project):
    admin = person(is_staff=True)

    response = save_settings(admin, project, "7")

    assert response.status_code == 200
    assert not AuditEntry.objects.exists()


def test_changes_on_the_alert_and_policy_pages_name_the_person(person, project, api):
    rule = api.post("/api/v1/alert-rules", {"name": "fuses", "conditions": [
        {"metric": "fuse_rate", "window": "5m", "op": ">", "threshold": 0.2}]}, format="json").json()
    AuditEntry.objects.all().delete()
    editor = person(is_staff=True)

    assert editor.post(f"/alerts/{project.slug}/{rule['id']}/toggle/").status_code == 302
    assert editor.post(f"/policy/{project.slug}/rollback", {"version": "0"}).status_code == 302

    entries = list(AuditEntry.objects.filter(project=project).order_by("id"))
    assert [(e.actor, e.action) for e in entries] == [("user:ada", "alert_rule.update"),
                                                      ("user:ada", "policy.rollback")]
    assert entries[0].detail["changed"] == {"enabled": {"before": True, "after": False}}


def test_agent_chosen_names_are_escaped(person, project, api):
    api.post("/api/v1/alert-rules", {"name": "<script>alert(1)</script>", "conditions": [
        {"metric": "fuse_rate", "window": "5m", "op": ">", "threshold": 0.2}]}, format="json")

    page = person().get(audit_url(project)).content.decode()

    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_empty_log_says_what_will_appear(person, project):
    page = person().get(audit_url(project)).content.decode()

    assert "No changes recorded yet" in page
    assert "alert rules" in page and "who made it" in page


@pytest.mark.parametrize("role", [Role.VIEWER, Role.EDITOR])
def test_anyone_but_an_admin_gets_a_403_in_plain_words(person, project, api, role):
    api.post("/api/v1/datasets", {"name": "hidden-set"}, format="json")

    response = person(role).get(audit_url(project))

    assert response.status_code == 403
    page = response.content.decode()
    assert f"You are {'an' if role == Role.EDITOR else 'a'} {role} in {project.slug}; ask an admin to make you an admin" in page
    assert "hidden-set" not in page


def test_another_projects_log_is_not_found(person, make_project):
    other, _ = make_project("globex")

    assert person().get(audit_url(other)).status_code == 404


def test_filters_and_a_bad_time_named(person, project, api):
    api.patch("/api/v1/project", {"name": "Acme"}, format="json")
    api.post("/api/v1/datasets", {"name": "golden"}, format="json")
    admin = person()

    filtered = admin.get(audit_url(project) + "?action=dataset.create").content.decode()
    assert "dataset golden" in filtered and "project acme" not in filtered
    assert "dataset golden" not in admin.get(audit_url(project) + "?object_type=project").content.decode()

    refused = admin.get(audit_url(project) + "?since=last+week").content.decode()
    assert 'data-field="since"' in refused and "dataset golden" in refused


def test_pages_of_fifty_newest_first(person, project, api):
    for number in range(51):
        api.patch("/api/v1/project", {"name": f"name-{number}"}, format="json")
    admin = person()

    first = admin.get(audit_url(project)).content.decode()
    assert "<td class=\"after\">name-50</td>" in first and "Older" in first
    assert "<td class=\"after\">name-0</td>" not in first
    second = admin.get(audit_url(project) + "?page=2").content.decode()
    assert "51–51 of 51" in second and "<td class=\"after\">name-0</td>" in second
