"""The Members page: every member reads who is in the project and with which
role; an admin changes a role and removes someone, each with its audit
entry; the last admin can be neither removed nor demoted, and the page says
so; another project's members and invitations stay out of reach."""

import pytest

from tenancy.models import AuditEntry, Membership, Project
from tests.support.accounts import client_of, person

# The SQLite smoke path too (the role matrix covers these pages on PostgreSQL).
pytestmark = pytest.mark.sqlite_smoke

MEMBERS = "/p/acme/settings/members/"


@pytest.fixture
def team(project, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return {role: person(project, role, f"{role}-1") for role in ("viewer", "editor", "admin")}


def roles(project) -> dict[str, str]:
    return dict(Membership.objects.filter(project=project).values_list("user__username", "role"))


def test_every_member_reads_the_list_but_only_an_admin_sees_working_forms(team):
    page = client_of(team["viewer"]).get(MEMBERS).content.decode()
    for name in ("viewer-1", "editor-1", "admin-1"):
        assert f'data-member="{name}"' in page
    assert "You are a viewer in acme; ask an admin to make you an admin." in page
    assert 'class="may-change" disabled' in page
    admin_page = client_of(team["admin"]).get(MEMBERS).content.decode()
    assert 'class="may-change" disabled' not in admin_page and "read-only-note" not in admin_page


def test_an_admin_changes_a_role_and_removes_a_member_with_audit_entries(team, project):
    admin = client_of(team["admin"])
    answer = admin.post(f"{MEMBERS}{team['viewer'].pk}/role", {"role": "editor"}, follow=True)
    assert "viewer-1 is now an editor." in answer.content.decode()
    assert roles(project)["viewer-1"] == "editor"
    admin.post(f"{MEMBERS}{team['editor'].pk}/remove")
    assert "editor-1" not in roles(project)
    entries = list(AuditEntry.objects.filter(project=project).order_by("id").values_list("action", "actor", "detail"))
    assert entries == [
        ("member.role", "user:admin-1", {"changed": {"role": {"before": "viewer", "after": "editor"}}}),
        ("member.remove", "user:admin-1", {"changed": {"role": {"before": "editor", "after": None}}}),
    ]


def test_the_last_admin_can_be_neither_removed_nor_demoted(team, project):
    admin = client_of(team["admin"])
    demoted = admin.post(f"{MEMBERS}{team['admin'].pk}/role", {"role": "viewer"}, follow=True).content.decode()
    assert "admin-1 is the last admin of acme: make someone else an admin first" in demoted
    removed = admin.post(f"{MEMBERS}{team['admin'].pk}/remove", follow=True).content.decode()
    assert "admin-1 is the last admin of acme" in removed
    assert roles(project)["admin-1"] == "admin"
    assert not AuditEntry.objects.exists()

    # With a second admin, the first may step down.
    admin.post(f"{MEMBERS}{team['editor'].pk}/role", {"role": "admin"})
    admin.post(f"{MEMBERS}{team['admin'].pk}/role", {"role": "viewer"})
    assert roles(project) == {"viewer-1": "viewer", "editor-1": "admin", "admin-1": "viewer"}


def test_an_unknown_role_is_refused_in_words(team, project):
    answer = client_of(team["admin"]).post(f"{MEMBERS}{team['viewer'].pk}/role", {"role": "owner"}, follow=True)
    assert "role must be one of viewer, editor, admin" in answer.content.decode()
    assert roles(project)["viewer-1"] == "viewer"


def test_another_projects_member_cannot_be_reached_from_this_project(team, make_project):
    other, _ = make_project("globex")
    stranger = person(other, "viewer", "gina")
    admin = client_of(team["admin"])
    assert admin.post(f"{MEMBERS}{stranger.pk}/remove").status_code == 404
    assert admin.post(f"{MEMBERS}{stranger.pk}/role", {"role": "admin"}).status_code == 404
    assert Membership.objects.get(user=stranger).role == "viewer"
    assert "gina" not in admin.get(MEMBERS).content.decode()
    assert client_of(stranger).get(MEMBERS).status_code == 404
    assert Project.objects.filter(slug="globex").exists()
