"""The project member the page tests sign in as, and people with a role."""

from django.contrib.auth import get_user_model
from django.test import Client

from tenancy.models import Membership

MEMBER_USERNAME, MEMBER_PASSWORD = "mia", "pw-mia-12345"


def person(project, role: str, username: str, password: str | None = None):
    """A user who is `role` in `project` (viewer, editor or admin)."""
    user = get_user_model().objects.create_user(username, password=password)
    Membership.objects.create(project=project, user=user, role=role)
    return user


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client
