"""The degrade ladder against a live dashboard: retries upstream with the fuse
reason, cross-checks a downweighted output, escalates after N fuses in a row,
stops at the round limit; sync and async producers alike."""

import asyncio

import pytest

import denoiseflow
from denoiseflow import ConfidenceFuse, Output, PolicyClient
from provenance.models import Escalation, Fuse
from tests.denoiseflow.dashboard import nodes_of

DEFAULT = {"accept": 0.8, "block": 0.5, "by_agent_type": {}, "by_step": {}, "max_rounds": 5, "max_retries": 2,
           "escalate_after": 3}


@pytest.fixture
def policy_fuse(live_server, project_and_key, api):
    """A fuse on the project's policy: version 1, retrieval blocked below 0.6."""
    response = api.put("/api/v1/policy", {"profiles": {"default": {
        **DEFAULT, "by_agent_type": {"retrieval": {"accept": 0.8, "block": 0.6}}}}, "note": "test"}, format="json")
    assert response.status_code == 200
    client = PolicyClient(live_server.url, project_and_key[1], refresh_interval=30)
    yield ConfidenceFuse.from_policy(client=client)
    client.close()


class Producer:
    """Answers the confidences given in turn; keeps the feedback it was given."""

    def __init__(self, *confidences):
        self.confidences = list(confidences)
        self.feedback = []

    def __call__(self, feedback):
        self.feedback.append(feedback)
        n = len(self.feedback)
        return Output(f"fragment, attempt {n}", self.confidences[min(n, len(self.confidences)) - 1])


def run(producer, recorder, fuse, trace_id, **options):
    options.setdefault("consumer", "reasoning_agent")
    return denoiseflow.guard(producer, trace_id=trace_id, agent_id="retrieval_agent_v2", step="retrieval",
                             fuse=fuse, recorder=recorder, **options)


def test_a_blocked_output_is_retried_with_the_reason_and_recorded_as_a_retry(live_recorder, policy_fuse, api):
    producer = Producer(0.4, 0.9)
    result = run(producer, live_recorder, policy_fuse, "guard-1")
    assert (result.outcome, result.attempts, result.ok) == ("accepted", 2, True)
    assert result.content == "fragment, attempt 2"
    first, retry = producer.feedback
    assert first is None
    assert (retry.attempt, retry.reason_code) == (2, "below_block")
    assert retry.reason == "confidence below the block threshold (retrieval)"
    assert live_recorder.flush(timeout=10)

    nodes = nodes_of(api, "guard-1")
    original = nodes[retry.previous.product_id]
    replacement = nodes[result.node.product_id]
    assert original["fused"] is True and replacement["fused"] is False
    assert (replacement["retry_of"], replacement["attempt"]) == (original["product_id"], 2)
    assert (original["round"], replacement["round"]) == (1, 2)
    fuses = Fuse.objects.filter(product_id=original["product_id"])
    assert [(f.reason_code, f.policy_version, f.by_agent_id) for f in fuses] == [
        ("below_block", 1, "reasoning_agent")]


def test_consecutive_fuses_escalate_to_a_person(live_recorder, policy_fuse):
    result = run(Producer(0.1), live_recorder, policy_fuse, "guard-2")
    assert (result.outcome, result.attempts, result.needs_person) == ("escalated", 3, True)
    assert live_recorder.flush(timeout=10)
    escalation = Escalation.objects.get(trace__trace_id="guard-2")
    assert (escalation.product_id, escalation.by_agent_id) == (result.node.product_id, "reasoning_agent")
    assert escalation.closed_at is None


def test_the_streak_of_fuses_carries_across_calls(live_recorder, policy_fuse):
    first = run(Producer(0.1), live_recorder, policy_fuse, "guard-3", max_retries=0, consumer="streaky")
    second = run(Producer(0.1), live_recorder, policy_fuse, "guard-3", max_retries=0, consumer="streaky")
    assert (first.outcome, second.outcome) == ("blocked", "blocked")
    assert run(Producer(0.1), live_recorder, policy_fuse, "guard-3", max_retries=0,
               consumer="streaky").outcome == "escalated"
    assert run(Producer(0.95), live_recorder, policy_fuse, "guard-3", consumer="streaky").outcome == "accepted"


def test_rounds_beyond_max_rounds_are_not_run_and_the_stop_is_recorded(live_recorder, policy_fuse, api):
    producer = Producer(0.1)
    result = run(producer, live_recorder, policy_fuse, "guard-4", round=4, escalate_after=10)
    assert (result.outcome, result.attempts, result.needs_person) == ("round_limit", 2, True)
    assert len(producer.feedback) == 2
    assert live_recorder.flush(timeout=10)
    assert sorted(n["round"] for n in nodes_of(api, "guard-4").values()) == [4, 5]
    assert "round limit" in Escalation.objects.get(trace__trace_id="guard-4").reason


def test_a_downweighted_output_is_cross_checked_and_retried_when_the_check_disagrees(live_recorder, policy_fuse):
    checked = []

    def cross_check(content, verdict):
        checked.append((content, verdict.decision))
        return len(checked) > 1

    producer = Producer(0.7, 0.7)
    result = run(producer, live_recorder, policy_fuse, "guard-5", cross_check=cross_check)
    assert (result.outcome, result.attempts) == ("downweighted", 2)
    assert checked == [("fragment, attempt 1", "downweight"), ("fragment, attempt 2", "downweight")]
    assert producer.feedback[1].reason_code == "cross_check_failed"


def test_async_producers_climb_the_same_ladder(live_recorder, policy_fuse, api):
    seen = []

    async def produce(feedback):
        seen.append(feedback)
        await asyncio.sleep(0)
        return ("async fragment", 0.3 if feedback is None else 0.85)

    result = asyncio.run(run(produce, live_recorder, policy_fuse, "guard-6"))
    assert (result.outcome, result.attempts) == ("accepted", 2)
    assert seen[1].reason_code == "below_block"
    assert live_recorder.flush(timeout=10)
    assert nodes_of(api, "guard-6")[result.node.product_id]["retry_of"] == seen[1].previous.product_id


def test_async_escalation(live_recorder, policy_fuse):
    async def produce(feedback):
        return Output("never good", 0.05)

    result = asyncio.run(run(produce, live_recorder, policy_fuse, "guard-7"))
    assert result.outcome == "escalated"


def test_an_object_whose_call_is_async_is_awaited_like_a_coroutine_function(live_recorder, policy_fuse, api):
    class AsyncProducer:
        def __init__(self):
            self.feedback = []

        async def __call__(self, feedback):
            self.feedback.append(feedback)
            await asyncio.sleep(0)
            return Output("async object's fragment", 0.3 if feedback is None else 0.9)

    producer = AsyncProducer()
    pending = run(producer, live_recorder, policy_fuse, "guard-async-object")
    assert asyncio.iscoroutine(pending)
    result = asyncio.run(pending)
    assert (result.outcome, result.attempts, result.content) == ("accepted", 2, "async object's fragment")
    assert producer.feedback[1].reason_code == "below_block"


def test_a_producer_answer_that_is_no_output_is_refused_clearly(live_recorder, policy_fuse):
    with pytest.raises(TypeError, match="a producer returns"):
        run(lambda feedback: 0.9, live_recorder, policy_fuse, "guard-8")
