"""Repeated wrong passwords at /login/ and /admin/login/ lock the username and
the address: a styled "try again in N minutes" page, the right password refused
too, other people unaffected."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.support.accounts import MEMBER_PASSWORD, MEMBER_USERNAME


def attempt(client: Client, password: str, username: str = MEMBER_USERNAME, path: str = "/login/"):
    return client.post(path, {"username": username, "password": password})


def test_ten_wrong_passwords_lock_the_account_even_for_the_right_one(member_user, settings):
    client = Client(REMOTE_ADDR="203.0.113.5")
    for _ in range(settings.LOGIN_FAILURE_LIMIT - 1):
        assert attempt(client, "wrong").status_code == 200  # the form again, with its error

    locked = attempt(client, "wrong")
    assert locked.status_code == 429
    assert "Try again in 15 minutes." in locked.content.decode()
    assert 0 < int(locked["Retry-After"]) <= 900

    right = attempt(client, MEMBER_PASSWORD)
    assert right.status_code == 429 and "_auth_user_id" not in client.session
    # The lock is on the username: from another address too.
    assert attempt(Client(REMOTE_ADDR="198.51.100.7"), MEMBER_PASSWORD).status_code == 429


def test_fewer_failures_than_the_limit_still_let_the_right_password_in(member_user, settings):
    client = Client(REMOTE_ADDR="203.0.113.6")
    for _ in range(settings.LOGIN_FAILURE_LIMIT - 1):
        attempt(client, "wrong")
    assert attempt(client, MEMBER_PASSWORD).status_code == 302


def test_one_address_trying_many_usernames_is_locked_but_others_are_not(member_user, settings):
    scanner = Client(REMOTE_ADDR="203.0.113.9")
    for i in range(settings.LOGIN_FAILURE_LIMIT):
        attempt(scanner, "guess", username=f"user{i}")
    assert attempt(scanner, MEMBER_PASSWORD).status_code == 429

    assert attempt(Client(REMOTE_ADDR="198.51.100.8"), MEMBER_PASSWORD).status_code == 302


@pytest.mark.django_db
def test_the_admin_login_is_throttled_the_same_way(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    get_user_model().objects.create_superuser("root", password="pw-root-12345")
    client = Client(REMOTE_ADDR="203.0.113.10")
    for _ in range(settings.LOGIN_FAILURE_LIMIT):
        assert attempt(client, "wrong", "root", "/admin/login/").status_code in (200, 429)
    locked = attempt(client, "pw-root-12345", "root", "/admin/login/")
    assert locked.status_code == 429
    assert "Too many sign-in attempts" in locked.content.decode()
    assert attempt(Client(REMOTE_ADDR="198.51.100.9"), "pw-root-12345", "someone-else", "/admin/login/").status_code == 200


# What Django's sign-in form turns into "mia" (NFKC, fullwidth and mathematical
# bold letters), and a capitalised spelling the lock has always counted as one.
LOOK_ALIKES = ["ｍｉａ", "𝐦𝐢𝐚", "ＭＩＡ"]


def test_unicode_look_alikes_of_a_locked_username_are_locked_too(member_user, settings):
    client = Client(REMOTE_ADDR="203.0.113.11")
    for _ in range(settings.LOGIN_FAILURE_LIMIT):
        attempt(client, "wrong")
    for i, username in enumerate(LOOK_ALIKES[:2]):
        other_address = Client(REMOTE_ADDR=f"198.51.100.{20 + i}")
        assert attempt(other_address, MEMBER_PASSWORD, username).status_code == 429
        assert "_auth_user_id" not in other_address.session


def test_guesses_spelled_as_look_alikes_count_toward_one_lock(member_user, settings):
    spellings = [MEMBER_USERNAME, *LOOK_ALIKES]
    for i in range(settings.LOGIN_FAILURE_LIMIT):
        attempt(Client(REMOTE_ADDR=f"198.51.100.{40 + i}"), "wrong", spellings[i % len(spellings)])
    assert attempt(Client(REMOTE_ADDR="198.51.100.99"), MEMBER_PASSWORD).status_code == 429
