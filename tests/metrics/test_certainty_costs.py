"""What certainty costs, per policy version: the share of cost and time on
retries, accuracy, fuse rate, escalations, p95 latency, cost per trace and
per correct answer, recomputed from the raw rows (production only)."""

from datetime import timedelta

import pytest

from tests.support.events import BASE_TIME, fuse_event, node_event, review_event

WINDOW = {"start": BASE_TIME.isoformat(), "end": (BASE_TIME + timedelta(hours=2)).isoformat()}


def version_traffic() -> list[dict]:
    events = []
    for t in range(12):
        version = 1 if t < 6 else 2
        trace = f"t{t}"
        environment = "evaluation" if t == 11 else "production"
        first = node_event(f"{trace}-a", trace, seconds=t * 60, confidence=0.3, duration_ms=100.0, cost_usd=0.01,
                           environment=environment)
        events.append(first)
        events.append(fuse_event(f"{trace}-a", "block", trace, policy_version=version))
        if version == 2:  # version 2 retries what it fused: more cost, more time
            events.append(node_event(f"{trace}-retry", trace, seconds=t * 60 + 5, confidence=0.8, duration_ms=300.0,
                                     cost_usd=0.03, retry_of=f"{trace}-a", environment=environment))
        if t == 7:  # a cross-check the SDK marked: on the expensive path too
            events.append(node_event(f"{trace}-check", trace, seconds=t * 60 + 7, confidence=0.9, duration_ms=10.0,
                                     cost_usd=0.001, metadata={"expensive_path": "cross_check"},
                                     environment=environment))
        events.append(node_event(f"{trace}-final", trace, seconds=t * 60 + 9, source_type="final_answer",
                                 confidence=0.9, duration_ms=50.0 * (t + 1), cost_usd=0.002, environment=environment))
        events.append(review_event(trace, "correct" if version == 2 or t % 2 else "incorrect"))
    return events


def test_each_version_shows_what_its_certainty_cost_and_bought(api, ingest):
    ingest(*version_traffic())
    rows = {r["policy_version"]: r for r in api.get("/api/v1/metrics/certainty", WINDOW).json()["by_policy_version"]}
    one, two = rows[1], rows[2]
    assert (one["traces"], two["traces"]) == (6, 5)  # t11 is evaluation traffic
    assert one["expensive_cost_share"] == 0 and one["cost_per_trace"] == pytest.approx(0.012)
    assert two["expensive_cost_share"] == pytest.approx((5 * 0.03 + 0.001) / (5 * 0.042 + 0.001))
    assert two["expensive_latency_share"] == pytest.approx((5 * 300 + 10) / (5 * 400 + 10 + 50 * sum(range(7, 12))))
    assert (one["accuracy"], two["accuracy"]) == (0.5, 1.0)
    assert one["cost_per_correct"] == pytest.approx(6 * 0.012 / 3)
    assert two["fuse_rate"] == pytest.approx(5 / 16)
    assert two["p95_latency_ms"] == 550.0  # nearest rank over 16 step times
