"""GET /metrics: a project's gauges per agent over the last 15 minutes, alert
states and health findings, in the Prometheus text format, as Prometheus'
own parser reads them."""

import io
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from prometheus_client.parser import text_string_to_metric_families

from tests.support.events import BASE_TIME, node_event

GAUGES = {
    "denoise_node_count": "node_count",
    "denoise_fuse_rate": "fuse_rate",
    "denoise_failure_rate": "failure_rate",
    "denoise_mean_confidence": "mean_confidence",
    "denoise_high_uncertainty_ratio": "high_uncertainty_ratio",
}
HOSTILE = 'agent "quoted" \\ back\nslash} {x="1"} ünïcode'


@pytest.fixture(autouse=True)
def no_cache(settings):
    settings.PROMETHEUS_CACHE_SECONDS = 0


def minutes_ago(minutes: float) -> float:
    """node_event's `seconds` (from BASE_TIME) for a moment `minutes` before now."""
    return (datetime.now(UTC) - timedelta(minutes=minutes) - BASE_TIME).total_seconds()


def scrape(client) -> dict[str, list]:
    response = client.get("/metrics")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    return {family.name: family.samples for family in text_string_to_metric_families(response.content.decode())}


def recent_traffic(ingest):
    ingest(
        node_event("r1", "t-a", agent_id="retriever", seconds=minutes_ago(6), confidence=0.9),
        node_event("r2", "t-b", agent_id="retriever", seconds=minutes_ago(5), confidence=0.3,
                   fuse={"decision": "block", "reason": "low"}),
        node_event("r3", "t-b", agent_id="retriever", seconds=minutes_ago(4), confidence=0.8, status="error"),
        node_event("x1", "t-a", agent_id=HOSTILE, seconds=minutes_ago(3), confidence=0.6),
        node_event("v1", "t-c", agent_id="verifier", seconds=minutes_ago(2)),
        # Older than the window: not counted, and "stale" is no agent seen in it.
        node_event("old", "t-d", agent_id="stale", seconds=minutes_ago(40), confidence=0.1),
    )


def test_gauges_per_agent_match_the_metrics_api_for_the_same_window(api, ingest):
    recent_traffic(ingest)
    families = scrape(api)
    end = datetime.now(UTC)
    window = {"start": (end - timedelta(minutes=15)).isoformat(), "end": end.isoformat()}
    agents = {sample.labels["agent_id"] for sample in families["denoise_node_count"]}
    assert agents == {"retriever", HOSTILE, "verifier"}
    for agent in agents:
        expected = api.get("/api/v1/metrics/values", {**window, "agent_id": agent}).json()["values"]
        for gauge, metric in GAUGES.items():
            found = [s for s in families[gauge] if s.labels["agent_id"] == agent]
            if expected[metric] is None:
                assert found == [], (gauge, agent)  # no confidence at all: no sample rather than a made-up one
                continue
            [sample] = found
            assert sample.labels["window"] == "15m"
            assert sample.value == pytest.approx(expected[metric]), (gauge, agent)
    retriever = {gauge: next(s.value for s in families[gauge] if s.labels["agent_id"] == "retriever")
                 for gauge in GAUGES}
    assert retriever["denoise_node_count"] == 3
    assert retriever["denoise_fuse_rate"] == pytest.approx(1 / 3)
    assert retriever["denoise_failure_rate"] == pytest.approx(2 / 3)
    assert retriever["denoise_high_uncertainty_ratio"] == pytest.approx(1 / 2)


def test_hostile_agent_ids_come_back_intact_and_cannot_forge_series(api, ingest):
    recent_traffic(ingest)
    response = api.get("/metrics")
    text = response.content.decode()
    # Every sample is one line: the newline inside the agent id is escaped.
    assert all(line.startswith(("#", "denoise_")) for line in text.splitlines() if line)
    families = {family.name: family.samples for family in text_string_to_metric_families(text)}
    hostile = [s for s in families["denoise_node_count"] if s.labels["agent_id"] == HOSTILE]
    assert [s.value for s in hostile] == [1]
    assert not any(s.labels.get("x") for samples in families.values() for s in samples)


def test_alert_rules_report_whether_they_fire(api, ingest, create_rule):
    recent_traffic(ingest)
    firing = create_rule(name='fires "now"', conditions=[
        {"metric": "node_count", "window": "15m", "op": ">", "threshold": 0}])
    quiet = create_rule(name="quiet", conditions=[{"metric": "node_count", "window": "15m", "op": ">", "threshold": 1000}])
    call_command("evaluate_alerts", stdout=io.StringIO())
    samples = {s.labels["rule_id"]: s for s in scrape(api)["denoise_alert_firing"]}
    assert samples[str(firing["id"])].value == 1 and samples[str(firing["id"])].labels["rule"] == 'fires "now"'
    assert samples[str(quiet["id"])].value == 0


def test_health_findings_of_the_newest_report_by_kind(api, ingest):
    assert scrape(api)["denoise_health_findings"] == []  # no report yet
    ingest(node_event("a", "t-h"), node_event("b", "t-h"), node_event("loop", "t-l", parents=["loop"]))
    call_command("check_dag_health", stdout=io.StringIO())
    findings = {s.labels["kind"]: s.value for s in scrape(api)["denoise_health_findings"]}
    assert findings == {"broken_link": 0, "orphan": 2, "cycle": 1, "fused_indirect_use": 0,
                        "round_limit_exceeded": 0}


def test_each_key_sees_its_own_project(api, other_api, ingest):
    recent_traffic(ingest)
    assert scrape(other_api)["denoise_node_count"] == []


def test_without_a_key_401(client, db):
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer not-a-key").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Basic abc").status_code == 401


def test_the_dashboard_pages_keep_their_prefix(member, project):
    assert member.get(f"/metrics/{project.slug}/").status_code == 200


def test_a_scrape_costs_the_same_few_queries_whatever_the_agents_and_rules(api, ingest, create_rule,
                                                                          django_assert_num_queries):
    # The key, the gauges of every agent in one grouped statement, their latency, tokens and cost in
    # another, the rules, the newest report.
    recent_traffic(ingest)
    for n in range(3):
        create_rule(name=f"rule {n}", conditions=[{"metric": "fuse_rate", "window": "15m", "op": ">", "threshold": 0.5}])
    with django_assert_num_queries(5):
        families = scrape(api)
    assert len(families["denoise_alert_firing"]) == 3
    assert len(families["denoise_node_count"]) == 3
