"""The fuse loop's alert metrics through `evaluate_alerts`: retry success
rate, escalation rate and round-limit breaches (against the policy's
max_rounds), with their values in the alert events and the rule builder."""

from datetime import timedelta

import pytest

from tests.support.events import BASE_TIME, node_event

DEFAULT = {"accept": 0.8, "block": 0.5, "by_agent_type": {}, "by_step": {}, "max_rounds": 5, "max_retries": 2,
           "escalate_after": 3}
FUSED = {"fuse": {"decision": "block", "reason": "low", "reason_code": "below_block"}}


def rule(metric: str, op: str, threshold: float, **extra) -> list[dict]:
    return [{"metric": metric, "window": "10m", "op": op, "threshold": threshold, **extra}]


def escalation(product_id: str, trace_id: str, seconds: float = 0) -> dict:
    return {"id": f"esc-{product_id}", "type": "escalation",
            "timestamp": (BASE_TIME + timedelta(seconds=seconds)).isoformat(),
            "body": {"trace_id": trace_id, "product_id": product_id, "reason": "3 fuses in a row"}}


def fired(alert_events) -> list[tuple[str, float]]:
    return [(v["metric"], v["value"]) for e in reversed(alert_events()) if e["state"] == "firing" for v in e["values"]]


@pytest.fixture
def retries(ingest):
    """Three fused first attempts; of their three retries one is fused again."""
    ingest(
        *[node_event(f"a{i}", f"t{i}", seconds=i, **FUSED) for i in range(3)],
        node_event("a0-retry", "t0", retry_of="a0", attempt=2, seconds=10),
        node_event("a1-retry", "t1", retry_of="a1", attempt=2, seconds=11),
        node_event("a2-retry", "t2", retry_of="a2", attempt=2, seconds=12, **FUSED),
        node_event("later", "t9", retry_of="a-missing", attempt=2, seconds=30 * 60),  # outside the window
    )


def test_retry_success_rate_is_the_share_of_retries_not_fused(create_rule, retries, evaluate, alert_events):
    create_rule(conditions=rule("retry_success_rate", "<", 0.7))
    create_rule(name="fine", conditions=rule("retry_success_rate", "<", 0.5))
    evaluate(1)
    [(metric, value)] = fired(alert_events)
    assert metric == "retry_success_rate" and value == pytest.approx(2 / 3)


def test_without_retries_the_success_rate_is_no_data_and_never_fires(create_rule, ingest, evaluate, alert_events,
                                                                     api):
    ingest(node_event("plain", "t1"))
    created = create_rule(conditions=rule("retry_success_rate", "<", 1))
    evaluate(1)
    assert fired(alert_events) == []
    assert api.get(f"/api/v1/alert-rules/{created['id']}").json()["last_values"][0]["value"] is None


def test_escalation_rate_is_escalations_per_trace(create_rule, retries, ingest, evaluate, alert_events):
    ingest(escalation("a2-retry", "t2", seconds=20))
    create_rule(conditions=rule("escalation_rate", ">=", 0.3))
    create_rule(name="retrieval only", conditions=rule("escalation_rate", ">", 0, filters={"agent_id": "nobody"}))
    evaluate(1)
    [(metric, value)] = fired(alert_events)
    assert metric == "escalation_rate" and value == pytest.approx(1 / 3)


def test_round_limit_breaches_count_traces_past_the_policys_max_rounds(create_rule, ingest, evaluate, alert_events,
                                                                       api):
    ingest(*[node_event(f"r{r}", "looping", round=r, seconds=r) for r in range(1, 8)],
           node_event("ok", "calm", round=5, seconds=1))
    create_rule(conditions=rule("round_limit_breaches", ">=", 1))
    evaluate(1)
    assert fired(alert_events) == [("round_limit_breaches", 1)]

    api.put("/api/v1/policy", {"profiles": {"default": {**DEFAULT, "max_rounds": 10}}}, format="json")
    evaluate(2)
    assert [e["state"] for e in alert_events()] == ["resolved", "firing"]

    api.put("/api/v1/policy", {"profiles": {"default": {**DEFAULT, "max_rounds": 4}}}, format="json")
    evaluate(3)
    assert fired(alert_events)[-1] == ("round_limit_breaches", 2)


def test_the_rule_builder_offers_the_new_metrics(member):
    page = member.get("/alerts/acme/new/").content.decode()
    for metric in ("retry_success_rate", "escalation_rate", "round_limit_breaches"):
        assert f'<option value="{metric}"' in page
