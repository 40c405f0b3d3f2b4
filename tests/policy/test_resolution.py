"""Threshold resolution, most specific first; the server's function and the
SDK's copy give the same answer for every case."""

import itertools

import pytest

from denoiseflow import thresholds as sdk
from policy import resolution as server

PROFILE = {
    "accept": 0.8, "block": 0.5,
    "by_agent_type": {"retrieval": {"accept": 0.7, "block": 0.4},
                      "retrieval_agent_v2": {"accept": 0.75, "block": 0.45},
                      "tool": {"accept": 0.9, "block": 0.6}},
    "by_step": {"refund": {"accept": 0.95, "block": 0.9}},
    "max_rounds": 5, "max_retries": 2, "escalate_after": 3,
}


@pytest.mark.parametrize("agent_id, step, expected", [
    ("retrieval_agent_v1", "", (0.7, 0.4, "by_agent_type:retrieval")),
    ("retrieval_agent_v2", "", (0.75, 0.45, "by_agent_type:retrieval_agent_v2")),
    ("retrieval_agent_v2", "refund", (0.95, 0.9, "by_step:refund")),
    ("reasoning", "lookup", (0.8, 0.5, "profile")),
    ("my_retrieval", "", (0.8, 0.5, "profile")),
    ("", "", (0.8, 0.5, "profile")),
])
def test_the_most_specific_rule_wins(agent_id, step, expected):
    assert tuple(server.resolve(PROFILE, agent_id, step)) == expected


def test_server_and_sdk_agree_on_every_case():
    agents = ["", "retrieval", "retrieval_agent", "retrieval_agent_v2", "retrieval_agent_v2x", "tool_call",
              "toolbox", "summary", "Retrieval"]
    steps = ["", "refund", "refunds", "lookup"]
    for agent_id, step in itertools.product(agents, steps):
        assert tuple(sdk.resolve(PROFILE, agent_id, step)) == tuple(server.resolve(PROFILE, agent_id, step))
    assert sdk.DEFAULT_PROFILE == __import__("policy.document").document.DEFAULT_PROFILE
