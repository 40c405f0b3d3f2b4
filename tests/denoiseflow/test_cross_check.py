"""A judge's verdict becomes a fuse decision: accept, or block with reason code
judge_rejected; an unclear or broken judge downweights."""

import pytest

import denoiseflow as df


@pytest.mark.parametrize("said, decision", [
    (True, "accept"), (False, "block"), ((False, "the date is wrong"), "block"), ("PASS - consistent", "accept"),
    ("No. The refund window is 30 days.", "block"), ({"ok": False, "reason": "contradicts source"}, "block"),
    ({"verdict": "correct"}, "accept"), ("hmm, maybe", "downweight"),
])
def test_verdicts_become_fuse_decisions(said, decision):
    verdict = df.cross_check("Refunds take 14 days.", lambda answer: said)
    assert verdict.decision == decision
    expected_code = {"accept": "judge_accepted", "block": "judge_rejected", "downweight": "judge_unclear"}[decision]
    assert verdict.as_fuse()["reason_code"] == expected_code


def test_a_rejection_keeps_the_judges_reason():
    verdict = df.cross_check("14 days", lambda answer: (False, "policy says 30 days"))
    assert verdict.blocked and verdict.reason == "policy says 30 days"
    assert verdict.as_fuse() == {"decision": "block", "reason": "policy says 30 days", "threshold": None,
                                 "reason_code": "judge_rejected"}


def test_an_unsure_judge_is_a_rejection_below_the_threshold():
    verdict = df.cross_check("x", lambda a: {"ok": True, "confidence": 0.4}, threshold=0.7)
    assert verdict.blocked and verdict.reason == "judge confidence 0.40 below 0.70"


def test_a_judge_that_raises_neither_passes_nor_condemns():
    def judge(answer):
        raise ConnectionError("judge model down")

    verdict = df.cross_check("x", judge)
    assert verdict.decision == "downweight" and "judge model down" in verdict.reason
