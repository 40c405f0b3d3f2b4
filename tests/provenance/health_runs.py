"""Shared by the health tests: running the check as an operator would, and a signed-in project member."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client


def run_check(*args) -> str:
    """`manage.py check_dag_health ARGS`; returns what it printed."""
    out = StringIO()
    call_command("check_dag_health", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def member(project) -> Client:
    user = get_user_model().objects.create_user("ann")
    project.members.add(user)
    client = Client()
    client.force_login(user)
    return client
