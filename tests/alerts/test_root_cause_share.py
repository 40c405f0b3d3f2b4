"""root_cause_share through `evaluate_alerts`: among the incorrect final
answers of the window, the share whose root causes include a node of the
filtered agent or step ("over 30% of wrong answers in 1 h trace back to the
retriever")."""

import pytest

from tests.provenance import root_cause_corpus as corpus

pytestmark = pytest.mark.django_db(transaction=True)


def rule(threshold: float, **filters) -> list[dict]:
    return [{"metric": "root_cause_share", "window": "1h", "op": ">", "threshold": threshold, "filters": filters}]


def test_root_cause_share_fires_on_the_agent_behind_most_wrong_answers(create_rule, ingest, evaluate, alert_events,
                                                                       api):
    corpus.load(ingest)
    retriever = create_rule(name="retriever", conditions=rule(0.3, agent_id="retriever"))
    tools = create_rule(name="tools", conditions=rule(0.3, step="tool_call"))
    either = create_rule(name="any", conditions=rule(0.99))
    evaluate(2)
    fired = {e["rule_id"]: e["values"][0]["value"] for e in alert_events() if e["state"] == "firing"}
    # 7 incorrect answers in the hour: t-fused, t-shared, t-low and t-cross trace back to the retriever.
    assert fired == {retriever["id"]: pytest.approx(4 / 7)}
    values = {r["id"]: r["last_values"][0]["value"] for r in api.get("/api/v1/alert-rules").json()}
    assert values[tools["id"]] == pytest.approx(1 / 7)
    # With no filter: every answer with a root cause (6 of 7; t-none has none).
    assert values[either["id"]] == pytest.approx(6 / 7)


def test_root_cause_share_counts_production_unless_another_environment_and_filters_the_answers_model(
        create_rule, ingest, evaluate, api):
    assert ingest(*corpus.environments_and_models())["errors"] == []
    rules = {
        "production": create_rule(name="production", conditions=rule(2, agent_id="retriever")),
        "staging": create_rule(name="staging", conditions=rule(2, agent_id="retriever", environment="staging")),
        "model-b": create_rule(name="model-b", conditions=rule(2, agent_id="reasoner", model="model-b")),
        "model-a": create_rule(name="model-a", conditions=rule(2, agent_id="reasoner", model="model-a")),
    }
    evaluate(5)  # the answers are 200-221 s after BASE_TIME
    values = {r["id"]: r["last_values"][0]["value"] for r in api.get("/api/v1/alert-rules").json()}
    # production: m-prod-a (retriever) and m-prod-b (reasoner); staging: m-stage-a (retriever).
    assert {name: values[r["id"]] for name, r in rules.items()} == {
        "production": pytest.approx(1 / 2), "staging": pytest.approx(1.0), "model-b": pytest.approx(1.0),
        "model-a": pytest.approx(0.0)}
