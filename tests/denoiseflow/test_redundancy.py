"""Redundant execution: samples run concurrently with diverse variants (threads
for plain functions, one event loop for async ones), answers vote by canonical
form or similarity, and the vote is reported in full."""

import asyncio
import threading
import time

import pytest

from denoiseflow import arun_redundant, diversity, run_redundant
from tests.denoiseflow.fakes import FakeLLM, scripted


def test_the_largest_cluster_of_labels_wins_when_it_reaches_the_threshold():
    result = run_redundant(scripted("refund", "Refund ", "billing", "refund", "shipping"), n=5)
    assert result.agreed and result.answer.strip().lower() == "refund"
    assert result.vote_ratio == 0.6
    assert result.confidence == 0.6
    assert result.metrics() == {"vote_ratio": 0.6, "self_consistency_score": 0.6, "samples": 5, "clusters": 3,
                                "failed_samples": 0, "semantic_entropy": pytest.approx(0.5904, abs=1e-3)}


def test_the_vote_keeps_cluster_sizes_and_losing_answers_in_metadata():
    result = run_redundant(scripted("refund", "billing", "refund", "refund", "shipping"), n=5)
    assert result.metadata() == {"redundancy_path": "voted", "agreement_threshold": 0.6, "cluster_sizes": [3, 1, 1],
                                 "losing_answers": ["billing", "shipping"]}
    assert "fuse" not in result.node_fields()


def test_without_agreement_the_step_falls_back_and_the_node_is_fused():
    result = run_redundant(scripted("a", "b", "c", "a", "d"), n=5, fallback=lambda answers: "ask a human")
    assert not result.agreed and result.fell_back
    assert result.answer == "ask a human"
    assert result.vote_ratio == 0.4
    assert result.node_fields()["fuse"] == {"decision": "downweight", "reason": "vote 0.40 below agreement 0.60",
                                            "threshold": 0.6, "reason_code": "vote_split"}
    assert result.metadata()["losing_answers"] == ["a", "b", "c", "d"]
    unanswered = run_redundant(scripted("a", "b", "c"), n=3)
    assert unanswered.answer is None and unanswered.node_fields()["fuse"]["decision"] == "block"


def test_a_share_below_the_threshold_is_never_agreement():
    assert not run_redundant(scripted("a", "a", "b", "c", "d"), n=5).agreed  # 0.4 < 0.6
    assert run_redundant(scripted("a", "a", "b", "c", "d"), n=5, agreement=0.4).agreed
    with pytest.raises(ValueError):
        run_redundant(scripted("a"), n=1, agreement=0)


def test_a_tie_is_not_agreement():
    assert not run_redundant(scripted("a", "a", "b", "b"), n=4, agreement=0.5).agreed


def test_structured_answers_vote_regardless_of_key_order():
    result = run_redundant(scripted({"intent": "refund", "order": 17}, {"order": 17, "intent": "refund"},
                                    '{"order": 17, "intent": "refund"}', {"intent": "billing", "order": 17}), n=4)
    assert result.agreed and result.vote_ratio == 0.75
    assert result.answer == {"intent": "refund", "order": 17}
    assert result.node_fields()["content"] == '{"intent": "refund", "order": 17}'


def test_a_key_hook_chooses_what_is_compared():
    answers = [{"intent": "refund", "why": "asked for money back"}, {"intent": "refund", "why": "wants a refund"},
               {"intent": "billing", "why": "invoice"}]
    assert not run_redundant(scripted(*answers), n=3).agreed
    result = run_redundant(scripted(*answers), n=3, key=lambda a: a["intent"])
    assert result.agreed and result.answer["intent"] == "refund"


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


def test_default_diversity_stays_within_the_recommended_temperatures_and_rotates_perspectives():
    model = FakeLLM("refund")
    run_redundant(lambda temperature, perspective: model.complete("q", temperature, perspective), n=6)
    temperatures = sorted(c["temperature"] for c in model.calls)
    assert all(0.7 <= t <= 1.0 for t in temperatures) and len(set(temperatures)) == 3
    assert len({c["perspective"] for c in model.calls}) == 4


def test_a_step_gets_only_the_variant_arguments_it_accepts():
    assert run_redundant(lambda: "ok", n=3).agreed
    assert run_redundant(lambda temperature: "ok", n=3).agreed
    assert run_redundant(lambda **variant: sorted(variant), n=2).answer == ["perspective", "temperature"]


def test_samples_run_in_parallel_with_diverse_variants():
    seen, lock = [], threading.Lock()

    def slow_step(temperature, prompt):
        with lock:
            seen.append((temperature, prompt))
        time.sleep(0.2)
        return "ok"

    started = time.monotonic()
    result = run_redundant(slow_step, n=4, variants=diversity((0.7, 0.9), prompts=("Answer:", "Reply briefly:")))
    assert time.monotonic() - started < 0.6
    assert sorted(seen) == [(0.7, "Answer:"), (0.7, "Answer:"), (0.9, "Reply briefly:"), (0.9, "Reply briefly:")]
    assert result.agreed


def test_a_sample_that_does_not_finish_in_time_is_a_failed_vote():
    release = threading.Event()

    def step(temperature):
        if temperature == 1.0:
            release.wait(5)
        return "fast"

    try:
        result = run_redundant(step, n=3, timeout=0.3)
    finally:
        release.set()
    assert result.failures == 1 and result.vote_ratio == pytest.approx(2 / 3)


def test_async_steps_are_awaited_concurrently():
    model = FakeLLM("refund", delay=0.2)
    started = time.monotonic()
    result = run_redundant(model.acomplete, n=5)
    assert time.monotonic() - started < 0.8  # five 0.2 s calls together, not one after another
    assert result.agreed and result.answer == "refund" and result.failures == 0
    assert len(model.calls) == 5


def test_async_concurrency_is_bounded():
    running, peak = 0, 0

    async def step(temperature):
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        return "ok"

    assert run_redundant(step, n=8, max_concurrency=3).vote_ratio == 1.0
    assert peak == 3


def test_arun_redundant_from_async_code_and_async_timeouts():
    async def step(temperature):
        await asyncio.sleep(10 if temperature == 1.0 else 0)
        return "ok"

    async def main():
        return await arun_redundant(step, n=3, timeout=0.3)

    result = asyncio.run(main())
    assert result.failures == 1 and result.answer == "ok"


def test_an_async_step_votes_even_when_called_from_inside_a_running_loop():
    async def step(temperature):
        return "inside"

    async def main():
        return run_redundant(step, n=3)  # sync call from async code: runs on a helper loop

    assert asyncio.run(main()).answer == "inside"


def test_a_plain_function_returning_a_coroutine_is_awaited():
    model = FakeLLM("refund")
    result = run_redundant(lambda temperature: model.acomplete("q", temperature), n=3)
    assert result.answer == "refund" and result.failures == 0


def test_seeded_fake_model_votes_the_same_way_every_time():
    def vote():
        model = FakeLLM("refund", ["billing", "shipping"], seed=3, stray=0.3)
        return run_redundant(lambda temperature, perspective: model.complete("q", temperature, perspective), n=7)

    first, second = vote(), vote()
    assert first.samples == second.samples and first.vote_ratio == second.vote_ratio
    assert first.answer == "refund" and first.vote_ratio == pytest.approx(5 / 7)
    assert first.metadata()["losing_answers"] == ["shipping", "billing"]
