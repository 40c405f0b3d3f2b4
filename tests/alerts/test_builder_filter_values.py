"""The rule builder takes an agent, step, source type or model as a prefix of
the project's values, case ignored, and stores the one exact value it stands
for, as the API stores what it is sent; a prefix of several values or of none
is a form error that says which values there are."""

import pytest

from alerts.models import AlertRule
from metrics.rollups.refresh import refresh_rollups
from tests.alerts.test_pages import builder_post
from tests.support.events import node_event


@pytest.fixture
def member_role():
    return "editor"


@pytest.fixture
def agents(ingest):
    ingest(*[node_event(f"p{i}", f"t{i}", agent_id=agent, step="entity_extraction")
             for i, agent in enumerate(["retrieval_agent_v1", "retrieval_agent_v2", "Reasoner"])])
    refresh_rollups()


def post(member, agent: str, step: str = "entity_extraction"):
    return member.post("/alerts/acme/new/", builder_post(condition_agent_id=["", agent], condition_step=["", step]))


def test_a_prefix_of_one_value_is_stored_as_that_value(member, project, agents):
    response = post(member, "reas", step="ENTITY")
    assert response.status_code == 302
    rule = AlertRule.objects.get(project=project)
    assert rule.conditions[1]["filters"] == {"agent_id": "Reasoner", "step": "entity_extraction"}


def test_a_prefix_of_several_values_is_refused_naming_them(member, project, agents):
    response = post(member, "retrieval")
    assert response.status_code == 200
    assert ("“retrieval” could be any of 2 agents (retrieval_agent_v1, retrieval_agent_v2); "
            "a rule watches one agent: pick one") in response.content.decode()
    assert not AlertRule.objects.exists()


def test_an_unknown_value_is_refused_naming_the_closest(member, project, agents):
    response = post(member, "retreival_agent_v2")
    assert "no agent in this project&#x27;s data starts with “retreival_agent_v2”; closest: retrieval_agent_v2" in (
        response.content.decode())
    assert not AlertRule.objects.exists()


@pytest.mark.parametrize("typed", ["x" * 10_000, "重試🙂"])
def test_hostile_filter_values_are_form_errors(member, project, agents, typed):
    response = post(member, typed)
    assert response.status_code == 200
    assert 'class="form-errors"' in response.content.decode()
    assert not AlertRule.objects.exists()


def test_a_nul_in_a_filter_value_is_refused_before_the_form(member, project, agents):
    # One guard refuses NUL in every page form (denoise_dashboard/nul_guard.py), so the builder never sees it.
    response = post(member, "a\x00b")
    assert response.status_code == 400
    assert not AlertRule.objects.exists()
