"""`manage.py check_dag_health [--now ISO8601]`."""

import pytest
from django.core.management import CommandError

from tests.provenance.health.health_runs import run_check as run
from tests.support.events import node_event

pytestmark = pytest.mark.django_db


def test_the_command_checks_every_project_and_says_what_it_found(api, other_api, ingest):
    ingest(node_event("a", "t"), node_event("b", "t", parents=["gone"]))
    ingest(node_event("x", "u"), client=other_api)
    out = run("--now", "2099-01-01T00:00:00+00:00")
    assert "acme: 2 findings (broken_link 1, orphan 1, cycle 0, fused_indirect_use 0, round_limit_exceeded 0) over 2 nodes" in out
    assert "globex: 0 findings" in out


def test_one_project_can_be_checked_alone(api, other_api):
    assert run("--project", "globex").startswith("globex: 0 findings")


@pytest.mark.parametrize("args, message", [
    (["--now", "yesterday"], "--now: 'yesterday' is not ISO 8601"),
    (["--project", "nope"], "--project: no project 'nope'"),
])
def test_bad_arguments_are_refused_clearly(db, args, message):
    with pytest.raises(CommandError, match=message):
        run(*args)


def test_a_run_costs_a_fixed_number_of_queries_whatever_the_size(api, ingest, django_assert_max_num_queries):
    from provenance import health
    from tenancy.models import Project

    ingest(*[node_event(f"n{i}", f"t{i % 7}", parents=[f"n{i - 1}"] if i else []) for i in range(300)])
    # Every link here is out of time order (one timestamp), so the cycle search takes its longest path.
    with django_assert_max_num_queries(45):
        health.check_project(Project.objects.get(slug="acme"))
