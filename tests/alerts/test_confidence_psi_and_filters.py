"""confidence_psi exactly as the contract defines it, recomputed here from the
confidences ingested; the `round`, `model` and `environment` filters."""

import math

import pytest

from tests.support.events import node_event


def contract_psi(now: list[float], before: list[float]) -> float:
    """Written from the contract: ten bins [0, 0.1) … [0.9, 1.0], shares floored
    at 0.0001, Σ (now − before)·ln(now ÷ before); 0 under 100 confidences."""
    if len(now) < 100 or len(before) < 100:
        return 0.0

    def shares(values):
        counts = [0] * 10
        for value in values:
            counts[min(int(value * 10), 9)] += 1
        return [max(c / len(values), 0.0001) for c in counts]

    return sum((n - b) * math.log(n / b) for n, b in zip(shares(now), shares(before)))


def batch(prefix: str, confidences: list[float], start_second: float, trace_prefix: str = "t"):
    return [node_event(f"{prefix}{i}", f"{trace_prefix}{i % 7}", seconds=start_second + i * 0.5, confidence=c)
            for i, c in enumerate(confidences)]


@pytest.fixture
def drifting(ingest):
    """120 confidences in minutes 0-5 spread evenly; 150 in minutes 5-10 piled up low
    (with 1.0 exactly, which the last bin holds)."""
    before = [((i * 37) % 100) / 100 for i in range(120)]
    now = [0.05 + (i % 3) * 0.1 for i in range(140)] + [1.0] * 10
    ingest(*batch("b", before, 0))
    ingest(*batch("n", now, 300))
    return now, before


def test_confidence_psi_is_the_contracts_formula_over_the_raw_confidences(drifting, create_rule, evaluate,
                                                                         alert_events):
    now, before = drifting
    expected = contract_psi(now, before)
    assert expected > 1
    create_rule(name="drift", conditions=[{"metric": "confidence_psi", "window": "5m", "op": ">", "threshold": 0.25}])
    evaluate(10)
    [event] = alert_events()
    assert event["state"] == "firing"
    assert math.isclose(event["values"][0]["value"], expected, rel_tol=1e-9)


def test_confidence_psi_is_0_under_100_confidences(ingest, create_rule, evaluate, api):
    ingest(*batch("b", [0.9] * 99, 0))
    ingest(*batch("n", [0.1] * 150, 300))
    rule = create_rule(conditions=[{"metric": "confidence_psi", "window": "5m", "op": ">=", "threshold": 0}])
    evaluate(10)
    assert api.get(f"/api/v1/alert-rules/{rule['id']}").json()["last_values"] == [
        {"metric": "confidence_psi", "value": 0.0}]


def test_identical_windows_have_no_drift(ingest, create_rule, evaluate, api):
    values = [((i * 13) % 100) / 100 for i in range(100)]
    ingest(*batch("b", values, 0))
    ingest(*batch("n", values, 300))
    rule = create_rule(conditions=[{"metric": "confidence_psi", "window": "5m", "op": ">", "threshold": 0}])
    evaluate(10)
    assert api.get(f"/api/v1/alert-rules/{rule['id']}").json()["last_values"][0]["value"] == 0.0


def test_a_round_filter_watches_one_backflow_round(ingest, create_rule, evaluate, api):
    """Seed 002: "alert when the fuse rate of a round passes 20%"."""
    fused = {"fuse": {"decision": "block", "reason": "low"}}
    ingest(*[node_event(f"r1-{i}", f"t{i}", seconds=10 + i, round=1) for i in range(8)],
           *[node_event(f"r2-{i}", f"t{i}", seconds=20 + i, round=2, **(fused if i < 3 else {})) for i in range(8)])
    rule = create_rule(conditions=[
        {"metric": "fuse_rate", "window": "5m", "filters": {"round": 2}, "op": ">", "threshold": 0.2},
        {"metric": "fuse_rate", "window": "5m", "filters": {"round": 1}, "op": ">", "threshold": 0.2}], match="any")
    assert rule["conditions"][0]["filters"] == {"round": 2}
    evaluate(1)
    assert api.get(f"/api/v1/alert-rules/{rule['id']}").json()["last_values"] == [
        {"metric": "fuse_rate", "value": 3 / 8}, {"metric": "fuse_rate", "value": 0.0}]


@pytest.mark.parametrize(("filters", "field"), [
    ({"round": "two"}, "conditions[0].filters.round"),
    ({"round": -1}, "conditions[0].filters.round"),
    ({"environment": "prod uction"}, "conditions[0].filters.environment"),
    ({"environment": "x" * 51}, "conditions[0].filters.environment"),
    ({"model": "m" * 256}, "conditions[0].filters.model"),
])
def test_bad_filters_are_a_400_naming_them(api, filters, field):
    response = api.post("/api/v1/alert-rules", {"name": "r", "conditions": [
        {"metric": "fuse_rate", "window": "5m", "filters": filters, "op": ">", "threshold": 0.2}]}, format="json")
    assert response.status_code == 400
    assert field in response.json()["fields"]


def test_model_and_environment_filters_are_kept_as_given(create_rule):
    rule = create_rule(conditions=[{"metric": "node_count", "window": "5m", "op": ">", "threshold": 0,
                                    "filters": {"model": "gpt-x", "environment": "staging"}}])
    assert rule["conditions"][0]["filters"] == {"model": "gpt-x", "environment": "staging"}


def test_environment_and_model_filters_narrow_what_a_metric_counts(ingest, create_rule, evaluate, api):
    """Production unless a condition names another environment; a model filter keeps that model's nodes."""
    fused = {"fuse": {"decision": "block", "reason": "low"}}
    ingest(*[node_event(f"p{i}", f"prod-{i % 3}", seconds=10 + i, model="small", **(fused if i < 2 else {}))
             for i in range(10)],
           *[node_event(f"pl{i}", f"prod-{i % 3}", seconds=30 + i, model="large") for i in range(4)],
           *[node_event(f"s{i}", f"stage-{i % 2}", seconds=50 + i, model="small", environment="staging", **fused)
             for i in range(6)])
    cases = [({}, "node_count", 14), ({"environment": "staging"}, "node_count", 6),
             ({"model": "large"}, "node_count", 4), ({"environment": "staging", "model": "large"}, "node_count", 0),
             ({}, "trace_count", 3), ({"environment": "staging"}, "trace_count", 2),
             ({}, "fuse_rate", 2 / 14), ({"environment": "staging"}, "fuse_rate", 1.0),
             ({"model": "small"}, "fuse_rate", 2 / 10)]
    rules = [create_rule(conditions=[{"metric": metric, "window": "5m", "op": ">=", "threshold": 0,
                                      "filters": filters}]) for filters, metric, _ in cases]
    evaluate(5)
    for rule, (filters, metric, expected) in zip(rules, cases):
        [value] = api.get(f"/api/v1/alert-rules/{rule['id']}").json()["last_values"]
        assert value["metric"] == metric and math.isclose(value["value"], expected), (filters, value)
