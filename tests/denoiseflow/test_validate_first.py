"""Validate-first: one call when the output passes, the vote only when it
fails or its confidence is low; the path taken is in the result and the node."""

import asyncio

import pytest

import denoiseflow as df
from tests.denoiseflow.fakes import FakeLLM

INTENT = df.schema({"type": "object", "required": ["intent", "amount"], "additionalProperties": False,
                    "properties": {"intent": {"enum": ["refund", "billing"]},
                                   "amount": {"type": "number", "minimum": 0, "maximum": 10_000}}})


def test_a_valid_first_answer_is_returned_after_one_call():
    model = FakeLLM('{"intent": "refund", "amount": 40}')
    result = df.run_redundant(lambda temperature: model.complete("q", temperature), n=5, validate=INTENT)
    assert len(model.calls) == 1
    assert result.path == "validated" and result.agreed
    assert result.answer == '{"intent": "refund", "amount": 40}'
    assert result.metrics() == {"samples": 1, "failed_samples": 0, "expensive_path": 0}
    assert result.metadata() == {"redundancy_path": "validated"}


def test_an_invalid_first_answer_pays_for_the_vote_and_invalid_samples_do_not_vote():
    answers = iter(['{"intent": "refund", "amount": -5}', '{"intent": "refund", "amount": 40}',
                    '{"amount": 40, "intent": "refund"}', '{"intent": "cancel", "amount": 40}',
                    '{"intent": "refund", "amount": 40}'])
    calls = []

    def step(temperature):
        calls.append(temperature)
        return next(answers)

    result = df.run_redundant(step, n=5, validate=INTENT, max_concurrency=1)
    assert len(calls) == 5
    assert result.path == "sampled" and result.agreed
    assert result.vote_ratio == 0.6 and result.failures == 2
    assert result.validation_error == "output.amount: -5 is below the minimum 0"
    assert result.metrics()["expensive_path"] == 1
    assert result.metadata()["validation_error"] == "output.amount: -5 is below the minimum 0"


def test_low_reported_confidence_also_takes_the_expensive_path():
    model = FakeLLM({"answer": "14 days", "confidence": 0.3})
    result = df.run_redundant(lambda temperature: model.complete("q", temperature), n=3,
                              confidence_of=lambda a: a["confidence"], min_confidence=0.6)
    assert len(model.calls) == 3 and result.path == "sampled"
    assert result.validation_error == "confidence 0.30 below 0.60"
    sure = FakeLLM({"answer": "14 days", "confidence": 0.9})
    cheap = df.run_redundant(lambda temperature: sure.complete("q", temperature), n=3,
                             confidence_of=lambda a: a["confidence"])
    assert len(sure.calls) == 1 and cheap.path == "validated" and cheap.confidence == 0.9


def test_a_first_call_that_raises_takes_the_expensive_path():
    calls = []

    def step(temperature):
        calls.append(temperature)
        if len(calls) == 1:
            raise TimeoutError("model timed out")
        return "refund"

    result = df.run_redundant(step, n=3, validate=df.one_of(["refund", "billing"]), max_concurrency=1)
    assert result.path == "sampled" and result.answer == "refund" and result.failures == 1
    assert result.validation_error == "the first call failed"


def test_validators_for_enums_and_ranges():
    assert df.run_redundant(lambda: " Refund", validate=df.one_of(["refund", "billing"])).path == "validated"
    assert df.run_redundant(lambda: "42.5", validate=df.in_range(0, 100)).path == "validated"
    result = df.run_redundant(lambda: 420, n=3, validate=df.in_range(0, 100))
    assert result.path == "sampled" and result.answer is None and result.failures == 3
    assert result.validation_error == "output: 420 is above the maximum 100"
    both = df.all_of(df.in_range(0, 100), lambda v: v % 2 == 0)
    assert df.run_redundant(lambda: 42, validate=both).path == "validated"
    assert df.run_redundant(lambda: 43, n=2, validate=both).validation_error == "validator returned False"


@pytest.mark.parametrize("output, error", [
    ("not json {", "output: expected object, got str"),
    ('{"intent": "refund"}', "output.amount: is required"),
    ('{"intent": "refund", "amount": "40"}', "output.amount: expected number, got str"),
    ('{"intent": "refund", "amount": 4, "x": 1}', "output.x: is not allowed"),
    ('{"intent": "cancel", "amount": 4}', "output.intent: 'cancel' is not one of ['refund', 'billing']"),
])
def test_schema_checks_name_what_failed(output, error):
    assert df.run_redundant(lambda: output, n=1, validate=INTENT).validation_error == error


def test_validate_first_with_an_async_step():
    model = FakeLLM("refund")
    result = df.run_redundant(model.acomplete, n=5, validate=df.one_of(["refund"]))
    assert result.path == "validated" and len(model.calls) == 1

    bad = FakeLLM("cancel")

    async def main():
        return await df.arun_redundant(bad.acomplete, n=4, validate=df.one_of(["refund"]))

    result = asyncio.run(main())
    assert result.path == "sampled" and len(bad.calls) == 4 and result.answer is None


def test_a_validator_is_a_predicate_and_silence_is_failure():
    assert df.run_redundant(lambda: "A-17", validate=lambda out: out.startswith("A-")).path == "validated"
    rejected = df.run_redundant(lambda: "B-17", n=2, validate=lambda out: (out.startswith("A-"), "not an order id"))
    assert rejected.path == "sampled" and rejected.validation_error == "not an order id"
    silent = df.run_redundant(lambda: "A-17", n=2, validate=lambda out: None)
    assert silent.path == "sampled" and silent.validation_error == "validator returned None"
