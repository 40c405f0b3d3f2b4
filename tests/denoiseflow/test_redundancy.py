"""Redundant execution: samples run in parallel with diverse variants, answers
vote by cluster, the vote share and self-consistency are reported."""

import threading
import time

import pytest

from denoiseflow import diversity, run_redundant


def scripted(*answers):
    """A fake model that gives the i-th answer to the i-th call, whatever its order."""
    lock, calls = threading.Lock(), iter(answers)

    def step(temperature):
        with lock:
            answer = next(calls)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return step


def test_the_largest_cluster_of_labels_wins_when_it_reaches_the_threshold():
    result = run_redundant(scripted("refund", "Refund ", "billing", "refund", "shipping"), n=5)
    assert result.agreed and result.answer.strip().lower() == "refund"
    assert result.vote_ratio == 0.6
    assert result.confidence == 0.6
    assert result.metrics() == {"vote_ratio": 0.6, "self_consistency_score": 0.6, "samples": 5, "clusters": 3,
                                "failed_samples": 0}


def test_without_agreement_the_step_falls_back():
    result = run_redundant(scripted("a", "b", "c", "a", "d"), n=5, fallback=lambda answers: "ask a human")
    assert not result.agreed and result.fell_back
    assert result.answer == "ask a human"
    assert result.vote_ratio == 0.4
    assert run_redundant(scripted("a", "b", "c"), n=3).answer is None


def test_a_tie_is_not_agreement():
    assert not run_redundant(scripted("a", "a", "b", "b"), n=4, agreement=0.5).agreed


def test_free_text_clusters_by_similarity():
    result = run_redundant(
        scripted(
            "Your refund was issued on 3 March and arrives within 5 business days.",
            "Your refund was issued on 3 March and will arrive within 5 business days.",
            "The refund was issued on March 3 and arrives within 5 business days.",
            "We cannot find your order.",
        ),
        n=4,
        mode="text",
        similarity_threshold=0.75,
    )
    assert result.agreed and result.vote_ratio == 0.75
    assert "refund" in result.answer
    assert 0.5 < result.confidence < 0.9  # the outlier pulls self-consistency down


def test_a_custom_similarity_function_is_used():
    same_number = lambda a, b: 1.0 if a.split()[-1] == b.split()[-1] else 0.0  # noqa: E731
    result = run_redundant(scripted("total 42", "sum 42", "result 41"), n=3, similarity=same_number)
    assert result.vote_ratio == pytest.approx(2 / 3)


def test_failed_samples_count_against_agreement():
    result = run_redundant(scripted("a", RuntimeError("model timeout"), "a", ValueError("bad json"), "a"), n=5)
    assert result.failures == 2
    assert result.vote_ratio == 0.6 and result.confidence == 1.0  # all answers that came back agree


def test_samples_run_in_parallel_with_diverse_variants():
    seen, lock = [], threading.Lock()

    def slow_step(temperature, prompt):
        with lock:
            seen.append((temperature, prompt))
        time.sleep(0.2)
        return "ok"

    started = time.monotonic()
    result = run_redundant(slow_step, n=4, variants=diversity((0.1, 0.9), prompts=("Answer:", "Reply briefly:")))
    assert time.monotonic() - started < 0.6
    assert sorted(seen) == [(0.1, "Answer:"), (0.1, "Answer:"), (0.9, "Reply briefly:"), (0.9, "Reply briefly:")]
    assert result.agreed


def test_a_sample_that_does_not_finish_in_time_is_a_failed_vote():
    def step(temperature):
        time.sleep(1.0 if temperature == 1.0 else 0)
        return "fast"

    result = run_redundant(step, n=3, timeout=0.3)
    assert result.failures == 1 and result.vote_ratio == pytest.approx(2 / 3)


def test_the_vote_is_recorded_as_a_node(live_recorder, api):
    result = run_redundant(scripted("refund", "refund", "billing"), n=3)
    node = live_recorder.record("vote-1", "intent_classifier", step="intent", **result.node_fields())
    assert live_recorder.flush(timeout=10)
    stored = api.get(f"/api/v1/traces/vote-1/nodes/{node.product_id}").json()
    assert stored["confidence"] == pytest.approx(2 / 3, abs=1e-4)
    assert stored["metrics"]["vote_ratio"] == pytest.approx(2 / 3, abs=1e-4)
    assert stored["content"] == "refund"
