"""Every periodic job's `--now` is parsed the same way and refused the same way."""

import io

import pytest
from django.core.management import CommandError, call_command


@pytest.mark.parametrize("command", ["evaluate_alerts", "check_dag_health"])
def test_a_malformed_now_is_refused_before_anything_runs(db, command):
    with pytest.raises(CommandError, match=r"--now: 'next tuesday' is not ISO 8601"):
        call_command(command, "--now", "next tuesday", stdout=io.StringIO())


@pytest.mark.parametrize("command", ["evaluate_alerts", "check_dag_health"])
def test_a_time_without_offset_is_utc(db, command):
    out = io.StringIO()
    call_command(command, "--now", "2026-11-20T09:15:00", stdout=out)
    if command == "evaluate_alerts":
        assert "2026-11-20T09:15:00+00:00" in out.getvalue()
