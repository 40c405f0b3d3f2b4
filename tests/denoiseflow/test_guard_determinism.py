"""`guard()` counts fuses in a row per ticket (trace) and step, so an
evaluation decides the same whatever its concurrency: one ticket's fuses never
push another ticket into an escalation."""

import random

import pytest

import denoiseflow
from tests.denoiseflow.eval_tasks import guarded

LOW, HIGH = 0.2, 0.9


def items():
    """60 tickets of two fragments, two attempts each (max_retries 1): a
    fragment blocked twice leaves the ticket's streak at 2, and the next fuse on
    that ticket is the third in a row."""
    rng = random.Random(22)
    return [{"id": f"i-{n:02d}", "input": {"fragments": [[rng.choice((LOW, HIGH)) for _ in range(2)]
                                                          for _ in range(2)]},
             "expected": 2} for n in range(60)]


def on_its_own(fragments) -> tuple[int, bool]:
    """What one ticket's calls decide by themselves: (fragments accepted, escalated)."""
    streak, accepted = 0, 0
    for confidences in fragments:
        for confidence in confidences:
            if confidence >= 0.8:
                streak, accepted = 0, accepted + 1
                break
            streak += 1
            if streak >= 3:
                return accepted, True
    return accepted, False


@pytest.fixture
def truth_set(api):
    assert api.post("/api/v1/datasets", {"name": "guarded"}, format="json").status_code == 201
    assert api.post("/api/v1/datasets/guarded/items", {"items": items()}, format="json").status_code == 200


def test_the_same_items_give_the_same_results_at_concurrency_1_and_8(truth_set, live_recorder):
    runs = [denoiseflow.evaluate("guarded", guarded, name=f"c{c}", concurrency=c, recorder=live_recorder)
            for c in (1, 8)]

    def outcomes(summary):
        return {r["item_id"]: (r["actual"], r["escalated"], r["passed"]) for r in summary["results"]}

    serial, parallel = runs
    assert outcomes(serial) == outcomes(parallel)
    assert serial["intervention_rate"] == parallel["intervention_rate"]
    assert serial["accuracy"] == parallel["accuracy"]

    # And each ticket decided on its own fuses alone.
    expected = {item["id"]: on_its_own(item["input"]["fragments"]) for item in items()}
    assert {item_id: (actual, escalated) for item_id, (actual, escalated, _) in outcomes(serial).items()} == expected
    escalated = sum(e for _, e in expected.values())
    assert 0 < escalated < 60
    assert serial["intervention_rate"] == pytest.approx(escalated / 60)


@pytest.mark.sqlite_smoke
def test_the_same_items_decide_the_same_on_the_embedded_default(truth_set, live_recorder):
    test_the_same_items_give_the_same_results_at_concurrency_1_and_8(truth_set, live_recorder)
