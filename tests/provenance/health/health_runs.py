"""Shared by the health tests: running the check as an operator would."""

from io import StringIO

from django.core.management import call_command


def run_check(*args) -> str:
    """`manage.py check_dag_health ARGS`; returns what it printed."""
    out = StringIO()
    call_command("check_dag_health", *args, stdout=out)
    return out.getvalue()
