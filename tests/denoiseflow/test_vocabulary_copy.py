"""The SDK's copy of the node vocabulary (it imports nothing of the server)
equals the server's: the default policy and the fuse decisions' names."""

import denoiseflow
from denoiseflow import ladder, vocabulary
from denoiseflow.fuse import ConfidenceFuse, Thresholds
from provenance import vocabulary as server


def test_the_sdks_default_policy_is_the_servers():
    assert vocabulary.DEFAULT_PROFILE == server.DEFAULT_PROFILE


def test_the_sdks_decision_names_are_the_servers():
    names = {decision.label for decision in server.FuseDecision if decision != server.FuseDecision.NONE}
    assert {vocabulary.ACCEPT, vocabulary.DOWNWEIGHT, vocabulary.BLOCK} == names
    assert vocabulary.BLOCK == server.FUSED.value.label
    assert (denoiseflow.ACCEPT, denoiseflow.DOWNWEIGHT, denoiseflow.BLOCK) == (
        vocabulary.ACCEPT, vocabulary.DOWNWEIGHT, vocabulary.BLOCK)


def test_the_sdks_built_in_limits_are_the_default_policys():
    default = Thresholds()
    assert (default.accept, default.block) == (server.DEFAULT_PROFILE["accept"], server.DEFAULT_PROFILE["block"])
    limits = ladder.limits_of(ConfidenceFuse(), None, None, None)
    assert (limits.max_retries, limits.escalate_after, limits.max_rounds) == tuple(
        server.DEFAULT_PROFILE[key] for key in ("max_retries", "escalate_after", "max_rounds"))
