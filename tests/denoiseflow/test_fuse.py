"""The confidence fuse: three tiers, per-agent-type thresholds, other scales,
and a reason for every decision."""

import math

import pytest

from denoiseflow import ConfidenceFuse, Thresholds, normalize


@pytest.mark.parametrize(
    ("confidence", "decision"),
    [(0.95, "accept"), (0.8, "accept"), (0.79, "downweight"), (0.5, "downweight"), (0.49, "block"), (0.0, "block")],
)
def test_default_tiers(confidence, decision):
    assert ConfidenceFuse().decide(confidence).decision == decision


def test_every_decision_says_why():
    fuse = ConfidenceFuse()
    assert fuse.decide(0.42).reason == "confidence below the block threshold"
    assert fuse.decide(0.42).threshold == 0.5
    assert fuse.decide(0.6).reason == "confidence below the accept threshold"
    assert fuse.decide(0.9).reason == "confidence meets the accept threshold"
    assert [fuse.decide(c).reason_code for c in (0.42, 0.6, 0.9, None)] == [
        "below_block", "below_accept", "meets_accept", "confidence_unknown"]
    assert fuse.decide(0.42).as_fuse() == {"decision": "block", "reason": fuse.decide(0.42).reason,
                                           "threshold": 0.5, "reason_code": "below_block"}


def test_reasons_carry_no_numbers_so_they_group_by_kind():
    fuse = ConfidenceFuse()
    assert len({fuse.decide(c).reason for c in (0.1, 0.2, 0.33, 0.49)}) == 1


def test_agent_types_have_their_own_thresholds_matched_by_prefix():
    fuse = ConfidenceFuse(by_agent_type={"retrieval": Thresholds(accept=0.9, block=0.7),
                                         "retrieval_web": Thresholds(accept=0.95, block=0.8)})
    verdict = fuse.decide(0.65, agent_type="retrieval_agent_v2")
    assert verdict.decision == "block"
    assert verdict.reason == "confidence below the block threshold (retrieval)"
    assert verdict.threshold == 0.7
    assert fuse.decide(0.75, agent_type="retrieval_web_v1").decision == "block"  # the longest prefix wins
    assert fuse.decide(0.65, agent_type="summarizer").decision == "downweight"  # the default


@pytest.mark.parametrize(
    ("value", "scale", "expected"),
    [(42, 100, 0.42), (42, "percent", 0.42), (0.3, 1, 0.3), (4, (1, 5), 0.75), (math.log(0.6), "logprob", 0.6)],
)
def test_other_scales_are_normalized(value, scale, expected):
    assert normalize(value, scale) == pytest.approx(expected)
    assert ConfidenceFuse().decide(value, scale=scale).confidence == pytest.approx(expected)


@pytest.mark.parametrize(("value", "scale"), [(120, 100), (-0.1, 1), (float("inf"), 1), ("high", 1), (0.5, "stars"),
                                              (0.2, "logprob")])
def test_values_off_their_scale_are_refused_with_a_reason(value, scale):
    with pytest.raises(ValueError):
        normalize(value, scale)


def test_an_unknown_confidence_is_downweighted_by_default():
    verdict = ConfidenceFuse().decide(None)
    assert (verdict.decision, verdict.reason) == ("downweight", "confidence unknown")
    assert ConfidenceFuse(on_unknown="block").decide(float("nan")).blocked


def test_thresholds_must_be_ordered():
    with pytest.raises(ValueError):
        Thresholds(accept=0.4, block=0.6)
