"""Accounts: a person changes their password (the other sessions end), signs
out everywhere (every session of theirs ends, other people's stay), and a
session ends after SESSION_IDLE_MINUTES without a request."""

import time

from django.contrib.sessions.models import Session
from django.test import Client

from tenancy.people.sessions import SEEN
from tests.support.accounts import MEMBER_PASSWORD, MEMBER_USERNAME, client_of, person

ACCOUNT = "/account/"
PAGE = "/p/acme/traces/"


def signed_in_browser() -> Client:
    client = Client()
    assert client.post("/login/", {"username": MEMBER_USERNAME, "password": MEMBER_PASSWORD}).status_code == 302
    return client


def test_a_password_change_keeps_this_session_and_ends_the_others(member_user):
    here, elsewhere = signed_in_browser(), signed_in_browser()
    assert "Change password" in here.get(ACCOUNT).content.decode()
    wrong = here.post(ACCOUNT, {"old_password": "nope", "new_password1": "x", "new_password2": "x"})
    assert wrong.status_code == 200 and "Your old password was entered incorrectly" in wrong.content.decode()
    short = here.post(ACCOUNT, {"old_password": MEMBER_PASSWORD, "new_password1": "short", "new_password2": "short"})
    assert "This password is too short" in short.content.decode()
    changed = here.post(ACCOUNT, {"old_password": MEMBER_PASSWORD, "new_password1": "a-new-long-phrase",
                                  "new_password2": "a-new-long-phrase"}, follow=True)
    assert "Password changed." in changed.content.decode()
    assert here.get(PAGE).status_code == 200
    assert elsewhere.get(PAGE)["Location"].startswith("/login/")


def test_sign_out_everywhere_ends_every_session_of_that_person_only(member_user, project):
    here, elsewhere = signed_in_browser(), signed_in_browser()
    other = client_of(person(project, "viewer", "otto"))
    answer = here.post(f"{ACCOUNT}sign-out-everywhere", follow=True)
    assert "Signed out everywhere (2 sessions ended)." in answer.content.decode()
    for client in (here, elsewhere):
        assert client.get(PAGE)["Location"].startswith("/login/")
    assert other.get(PAGE).status_code == 200
    assert Session.objects.count() >= 1


def test_a_session_idle_longer_than_the_limit_ends(member_user, settings):
    settings.SESSION_IDLE_MINUTES = 30
    client = signed_in_browser()
    assert client.get(PAGE).status_code == 200

    session = client.session
    session[SEEN] = time.time() - 29 * 60
    session.save()
    assert client.get(PAGE).status_code == 200  # 29 minutes: still signed in, and the clock moves on
    assert client.session[SEEN] > time.time() - 60

    session = client.session
    session[SEEN] = time.time() - 31 * 60
    session.save()
    answer = client.get(PAGE, follow=True)
    assert answer.redirect_chain[0][0].startswith("/login/")
    assert "You were signed out after 30 minutes without activity" in answer.content.decode()


def test_the_idle_clock_is_written_at_most_once_a_minute(member_user):
    client = signed_in_browser()
    client.get(PAGE)
    before = client.session[SEEN] if SEEN in client.session else None
    client.get(PAGE)
    assert (client.session[SEEN] if SEEN in client.session else None) == before
