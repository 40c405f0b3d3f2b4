"""Invitations by link: an admin makes one (shown once, mailed when email is
set up); the invite page names the project and role; a new person sets a
username and a password (Django's validators) and lands in the project with
that role; a signed-in person joins with a click; a used, expired, withdrawn
or unknown link says so without naming any project."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from tenancy.models import AuditEntry, Invitation, Membership
from tenancy.people import invitations
from tests.support.accounts import client_of, person

MEMBERS = "/p/acme/settings/members/"


@pytest.fixture
def admin(project, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return person(project, "admin", "ada")


def invite(admin, **fields) -> str:
    page = client_of(admin).post(f"{MEMBERS}invite", {"role": "editor", "days": "7", **fields}).content.decode()
    return re.search(r'id="invite-link" value="([^"]+)"', page).group(1)


def test_a_new_person_joins_with_the_link_as_the_invited_role(admin, project):
    link = invite(admin)
    assert link.startswith("http://testserver/invite/")
    path = link.removeprefix("http://testserver")
    invitation = Invitation.objects.get()
    assert invitation.token_hash == invitations.token_hash(path.split("/")[2]) and path.split("/")[2] not in str(
        Invitation.objects.values_list().get())
    assert abs(invitation.expires_at - (timezone.now() + timedelta(days=7))) < timedelta(minutes=1)

    visitor = Client()
    page = visitor.get(path).content.decode()
    assert "Join acme" in page and 'id="invite-role">editor<' in page

    weak = visitor.post(path, {"username": "nina", "password1": "short", "password2": "short"})
    assert weak.status_code == 400 and "This password is too short" in weak.content.decode()
    assert not get_user_model().objects.filter(username="nina").exists()

    joined = visitor.post(path, {"username": "nina", "password1": "a-long-pass-phrase", "password2": "a-long-pass-phrase"},
                          follow=True)
    assert joined.redirect_chain[-1][0] == "/p/acme/traces/"
    assert "Welcome to acme: you are an editor here." in joined.content.decode()
    nina = get_user_model().objects.get(username="nina")
    assert Membership.objects.get(project=project, user=nina).role == "editor"
    assert list(AuditEntry.objects.order_by("id").values_list("action", "actor")) == [
        ("invitation.create", "user:ada"), ("member.add", "user:nina"), ("invitation.accept", "user:nina")]

    again = Client().get(path)
    assert again.status_code == 410 and "already used" in again.content.decode()
    assert "acme" not in again.content.decode()


def test_a_signed_in_person_joins_with_a_click_and_is_never_demoted(admin, project, make_project):
    other, _ = make_project("globex")
    someone = person(other, "admin", "sam")
    link = invite(admin, role="viewer").removeprefix("http://testserver")
    client = client_of(someone)
    assert "You are signed in as <strong>sam</strong>" in client.get(link).content.decode()
    client.post(link)
    assert Membership.objects.get(project=project, user=someone).role == "viewer"
    # A second, lower invitation to someone already an editor leaves them an editor.
    Membership.objects.filter(project=project, user=someone).update(role="editor")
    client.post(invite(admin, role="viewer").removeprefix("http://testserver"))
    assert Membership.objects.get(project=project, user=someone).role == "editor"


@pytest.mark.parametrize("how", ["expired", "withdrawn", "unknown"])
def test_an_unusable_link_says_so_and_names_no_project(admin, how):
    path = invite(admin).removeprefix("http://testserver")
    invitation = Invitation.objects.get()
    if how == "expired":
        Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    elif how == "withdrawn":
        client_of(admin).post(f"/p/acme/settings/invitations/{invitation.pk}/revoke")
        assert AuditEntry.objects.filter(action="invitation.revoke").count() == 1
    else:
        path = path[:-5] + "xxxx/"
    answer = Client().get(path)
    text = answer.content.decode()
    assert answer.status_code == 410
    assert ("not valid" if how == "unknown" else "expired or was withdrawn") in text
    assert "acme" not in text and "editor" not in text
    refused = Client().post(path, {"username": "x", "password1": "a-long-pass-phrase", "password2": "a-long-pass-phrase"})
    assert refused.status_code == 410 and not get_user_model().objects.filter(username="x").exists()


def test_another_projects_invitation_cannot_be_withdrawn_from_here(admin, make_project):
    other, _ = make_project("globex")
    theirs = invitations.create(other, person(other, "admin", "gina"), "admin")
    answer = client_of(admin).post(f"/p/acme/settings/invitations/{theirs.invitation.pk}/revoke")
    assert answer.status_code == 404
    assert invitations.usable(theirs.token) == theirs.invitation
    page = client_of(admin).get(MEMBERS).content.decode()
    assert "globex" not in page and "gina" not in page


def test_with_email_set_up_the_link_is_also_mailed(admin, smtp, settings):
    settings.INVITATION_EMAIL = True
    page = client_of(admin).post(f"{MEMBERS}invite", {"role": "viewer", "days": "1", "email": "nina@example.org"})
    link = re.search(r'id="invite-link" value="([^"]+)"', page.content.decode()).group(1)
    assert "The link was also emailed to nina@example.org." in page.content.decode()
    [(_, recipients, message)] = smtp.messages
    assert recipients == ["nina@example.org"] and "acme" in message["Subject"]
    assert link in message.get_content()
