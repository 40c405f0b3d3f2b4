"""A later `load_demo` (a `make run` restart) adds only the traffic of the time
that passed, at the regular pace: the story's incidents and its dense last hour
stay where the first load put them, and no new burst appears."""

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from demo import history
from provenance.models import Trace

pytestmark = pytest.mark.django_db(transaction=True)


def load(var_dir, now):
    call_command("load_demo", scale=0.1, now=now.isoformat(), stdout=io.StringIO())
    return set(Trace.objects.values_list("trace_id", flat=True))


def test_a_restart_two_hours_later_adds_the_regular_tickets_of_those_two_hours_only(tmp_path):
    now = timezone.now().replace(microsecond=0)
    first_load = now - timedelta(hours=2)
    with override_settings(VAR_DIR=tmp_path):
        before = load(tmp_path, first_load)
        after = load(tmp_path, now)
    added = after - before
    slot = history.floor(first_load, history.REGULAR_EVERY) + history.REGULAR_EVERY
    expected = set()
    while slot < now:
        expected.add(history.trace_id_at(slot))
        slot += history.REGULAR_EVERY
    assert added == expected
    assert 7 <= len(added) <= 8
    # A third load at the same moment adds nothing.
    with override_settings(VAR_DIR=tmp_path):
        assert load(tmp_path, now) == after


def test_a_moment_in_the_future_is_refused(tmp_path):
    with override_settings(VAR_DIR=tmp_path), pytest.raises(Exception, match="--now"):
        call_command("load_demo", scale=0.1, now=(timezone.now() + timedelta(hours=1)).isoformat(),
                     stdout=io.StringIO())
