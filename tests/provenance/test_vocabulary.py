"""The node vocabulary: each rule's SQL, ORM and Python forms pick the same
nodes, and the health check and the metrics apply one default round limit."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection

from metrics.values import window_values
from provenance import vocabulary
from provenance.health import round_limit
from provenance.models import Node
from tests.support.events import BASE_TIME, fuse_event, node_event

THRESHOLD, MAX_ROUNDS = 0.5, 5
RULES = ["ACCEPTED", "DOWNWEIGHTED", "FUSED", "ERRORED", "FAILED", "HIGH_UNCERTAINTY", "RETRIED", "RETRIED_OK",
         "ANOMALOUS", "GUARDED", "OVER_ROUND_LIMIT"]


@pytest.fixture
def varied_nodes(ingest, project):
    ingest(
        node_event("plain", confidence=0.9, round=1),
        node_event("unsure", confidence=0.2, round=6, parents=["plain"]),
        node_event("no-confidence"),
        node_event("at-threshold", confidence=THRESHOLD, round=5),
        node_event("broken", confidence=0.7, status="error"),
        node_event("blocked", confidence=0.3),
        node_event("weighed", confidence=0.6),
        node_event("taken", confidence=0.95),
        node_event("retry-ok", confidence=0.9, retry_of="blocked", attempt=2),
        node_event("retry-blocked", confidence=0.1, retry_of="blocked", attempt=3),
        fuse_event("blocked", "block"), fuse_event("retry-blocked", "block"),
        fuse_event("weighed", "downweight"), fuse_event("taken", "accept"),
    )
    return project


def by_sql(project, rule) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT product_id FROM {Node._meta.db_table} n WHERE n.project_id = %s "
                       f"AND {rule.sql('n', threshold=str(THRESHOLD), max_rounds=str(MAX_ROUNDS))}", [project.pk])
        return {row[0] for row in cursor.fetchall()}


def params_of(rule) -> dict:
    return {name: {"threshold": THRESHOLD, "max_rounds": MAX_ROUNDS}[name] for name in rule.parameters()}


@pytest.mark.parametrize("name", RULES)
def test_a_rules_sql_orm_and_python_forms_pick_the_same_nodes(varied_nodes, name):
    rule = getattr(vocabulary, name)
    nodes = Node.objects.filter(project=varied_nodes)
    params = params_of(rule)
    orm = set(nodes.filter(rule.q(**params)).values_list("product_id", flat=True))
    annotated = set(nodes.annotate(flag=rule.condition(**params)).filter(flag=True)
                    .values_list("product_id", flat=True))
    python = {node.product_id for node in nodes if rule.holds(node, **params)}
    compiled = rule.function(*rule.columns(), **params)
    positional = {node.product_id for node in nodes if compiled(*(getattr(node, c) for c in rule.columns()))}
    assert by_sql(varied_nodes, rule) == orm == annotated == python == positional


def test_the_rules_mean_what_the_contract_says(varied_nodes):
    def picked(rule):
        return by_sql(varied_nodes, rule)

    assert picked(vocabulary.FUSED) == {"blocked", "retry-blocked"}
    assert picked(vocabulary.FAILED) == {"blocked", "retry-blocked", "broken"}
    # Below the threshold, not at it; a node without a confidence is not high-uncertainty.
    assert picked(vocabulary.HIGH_UNCERTAINTY) == {"unsure", "blocked", "retry-blocked"}
    assert picked(vocabulary.RETRIED_OK) == {"retry-ok"}
    assert picked(vocabulary.OVER_ROUND_LIMIT) == {"unsure"}


def test_an_anomaly_is_named_by_the_first_rule_that_applies(varied_nodes):
    anomaly = vocabulary.anomaly_test(THRESHOLD)
    found = {node.product_id: anomaly(node.fuse_state, node.is_error, node.confidence)
             for node in Node.objects.filter(project=varied_nodes)}
    assert found == {"plain": None, "unsure": "low_confidence", "no-confidence": None, "at-threshold": None,
                     "broken": "error", "blocked": "fused", "weighed": None, "taken": None, "retry-ok": None,
                     "retry-blocked": "fused"}


def test_without_a_policy_the_health_check_and_metrics_apply_the_same_round_limit(api, ingest, project,
                                                                                  monkeypatch):
    """With no policy registered (the `policy` app absent), health and metrics
    both judge rounds by the default policy's max_rounds."""
    monkeypatch.setattr(round_limit, "_round_limit", None)
    limit = vocabulary.DEFAULT_PROFILE["max_rounds"]
    assert limit == 5
    ingest(*[node_event(f"loop-{r}", "looping", round=r, seconds=r) for r in range(1, limit + 2)],
           *[node_event(f"calm-{r}", "calm", round=r, seconds=r) for r in range(1, limit + 1)])

    call_command("check_dag_health", stdout=open("/dev/null", "w"))
    body = api.get("/api/v1/health/latest", {"kind": "round_limit_exceeded"}).json()
    health = {finding["trace_id"] for finding in body["findings"]}
    metrics = window_values(project, BASE_TIME, BASE_TIME + timedelta(hours=1),
                            metrics=["round_limit_breaches"])["round_limit_breaches"]
    assert health == {"looping"}
    assert metrics == len(health)
