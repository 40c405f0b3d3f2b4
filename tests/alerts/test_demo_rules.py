"""The demo project's four rules: installed once, and the composite trend
rule fires on the traffic it is meant to catch."""

import pytest
from rest_framework.exceptions import ValidationError

from demo.alert_rules import install_demo_rules
from tests.support.events import node_event


def test_installing_twice_creates_the_four_rules_once(project, api):
    first = install_demo_rules(project)
    second = install_demo_rules(project)
    assert [r.pk for r in first] == [r.pk for r in second]
    listed = api.get("/api/v1/alert-rules").json()
    assert sorted(r["name"] for r in listed) == sorted(r.name for r in first)
    composite = next(r for r in listed if r["name"].startswith("Extraction degrading"))
    assert composite["match"] == "all"
    assert composite["conditions"] == [
        {"metric": "mean_confidence", "window": "15m", "filters": {"step": "entity_extraction"}, "change": "relative",
         "op": "<", "threshold": -0.25},
        {"metric": "failure_rate", "window": "15m", "filters": {"step": "entity_extraction"}, "op": ">",
         "threshold": 0.7},
    ]
    assert all(r["destinations"] == [] for r in listed)
    assert len(listed) == 4
    accuracy = next(r for r in listed if r["name"].startswith("Evaluation accuracy"))
    assert accuracy["conditions"] == [{"metric": "eval_accuracy", "filters": {"dataset": "ticket-triage"},
                                       "change": "relative", "op": "<", "threshold": -0.05}]


def test_a_loopback_webhook_needs_allow_private(project, settings):
    with pytest.raises(ValidationError):
        install_demo_rules(project, webhook_url="http://127.0.0.1:8141/hook")
    settings.WEBHOOK_ALLOW_PRIVATE = True
    rules = install_demo_rules(project, webhook_url="http://127.0.0.1:8141/hook")
    assert all(r.destinations.get().config["url"] == "http://127.0.0.1:8141/hook" for r in rules)


def test_the_composite_rule_fires_when_uncertainty_rises_and_extraction_fails(project, ingest, evaluate,
                                                                               alert_events):
    rules = {r.name: r.pk for r in install_demo_rules(project)}
    calm = [node_event(f"calm-{m}", f"calm-{m}", seconds=m * 60, step="entity_extraction", confidence=0.9)
            for m in range(15)]
    rough = [node_event(f"rough-{m}", f"rough-{m}", seconds=(15 + m) * 60, step="entity_extraction",
                        confidence=0.3, status="error") for m in range(15)]
    ingest(*calm, *rough)
    evaluate(15)
    evaluate(30)
    fired = {e["rule_id"] for e in alert_events(state="firing")}
    composite = next(pk for name, pk in rules.items() if name.startswith("Extraction degrading"))
    assert fired == {composite}
