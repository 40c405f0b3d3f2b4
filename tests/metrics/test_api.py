"""GET /api/v1/metrics/…: the dashboards' series as JSON, scoped to the key's project."""

from datetime import timedelta

import pytest

from metrics.rollups.refresh import refresh_rollups
from tests.metrics.traffic import post_in_batches, workflow_events
from tests.support.events import BASE_TIME, node_event, review_event

WINDOW = {"start": BASE_TIME.isoformat(), "end": (BASE_TIME + timedelta(hours=8)).isoformat()}
DASHBOARDS = ["overview", "fuses", "distributions", "drift", "calibration"]


@pytest.fixture
def traffic(ingest):
    post_in_batches(ingest, workflow_events(seed=21, traces=40))
    ingest(review_event("t1", "incorrect"), review_event("t2", "correct"), review_event("t3", "correct"))
    refresh_rollups()


def test_values_answers_the_alert_metrics(api, traffic):
    response = api.get("/api/v1/metrics/values", {**WINDOW, "agent_id": "retriever", "metrics": "node_count,fuse_rate"})
    assert response.status_code == 200
    body = response.json()
    assert set(body["values"]) == {"node_count", "fuse_rate"}
    assert body["values"]["node_count"] > 0
    assert body["query"]["agent_id"] == "retriever"


@pytest.mark.parametrize("name", DASHBOARDS)
def test_every_dashboard_answers_json(api, traffic, name):
    response = api.get(f"/api/v1/metrics/{name}", WINDOW)
    assert response.status_code == 200, response.content
    assert response.json()["query"]["start"] == "2026-11-20T09:00:00Z"


def test_overview_series_cover_every_bucket(api, traffic):
    body = api.get("/api/v1/metrics/overview", {**WINDOW, "resolution": "hour"}).json()
    assert len(body["buckets"]) == 8
    assert len(body["high_uncertainty_ratio"]) == 8
    assert set(body["fuse_rate_by_agent"]) == {"retriever", "reasoner", "verifier"}
    assert body["headline"]["current"]["node_count"] == sum(body["node_count"])


def test_another_projects_key_sees_none_of_it(other_api, traffic):
    body = other_api.get("/api/v1/metrics/overview", WINDOW).json()
    assert body["headline"]["current"]["node_count"] == 0
    assert other_api.get("/api/v1/metrics/options").json()["agent_id"] == []
    assert other_api.get("/api/v1/metrics/calibration", WINDOW).json()["count"] == 0


def test_options_list_the_filter_values(api, traffic):
    options = api.get("/api/v1/metrics/options").json()
    assert options["agent_id"] == ["reasoner", "retriever", "verifier"]
    assert options["round"] == [1, 2]
    assert options["metric"] == ["self_consistency_score", "semantic_entropy"]


def test_an_api_key_is_required(client):
    assert client.get("/api/v1/metrics/overview").status_code == 401


@pytest.mark.parametrize("query, field", [
    ({"start": "yesterday"}, "start"),
    ({"range": "2w"}, "range"),
    ({"start": "2026-11-20T10:00:00Z", "end": "2026-11-20T09:00:00Z"}, "start"),
    ({"round": "first"}, "round"),
    ({"range": "30d", "resolution": "minute"}, "resolution"),
    ({"baseline_start": "2026-11-20T10:00:00Z"}, "baseline_start"),
])
def test_bad_parameters_answer_400_naming_the_field(api, query, field):
    response = api.get("/api/v1/metrics/overview", query)
    assert response.status_code == 400
    assert field in response.json()["fields"]


def test_an_unknown_metric_or_dashboard_is_refused(api):
    assert api.get("/api/v1/metrics/values", {"metrics": "nope"}).status_code == 400
    assert api.get("/api/v1/metrics/nope").status_code == 404


def test_an_empty_project_answers_zeros(api):
    body = api.get("/api/v1/metrics/fuses", {"range": "24h"}).json()
    assert body["by_agent"] == [] and body["consecutive_fuses"] == []
    assert api.get("/api/v1/metrics/distributions", {"range": "24h"}).json()["metrics"] == []


def test_one_node_is_enough_for_every_dashboard(api, ingest):
    ingest(node_event("solo", seconds=60, confidence=0.3, metrics={"semantic_entropy": 1.2}))
    for name in DASHBOARDS:
        assert api.get(f"/api/v1/metrics/{name}", WINDOW).status_code == 200


def test_explicit_dates_win_over_a_preset_range(api):
    body = api.get("/api/v1/metrics/overview", {"range": "30d", **WINDOW}).json()
    assert (body["query"]["start"], body["query"]["range"]) == ("2026-11-20T09:00:00Z", "")


def test_rounds_are_charted_in_numeric_order(api, ingest):
    ingest(*[node_event(f"r{n}", f"t{n}", round=n, confidence=0.5, seconds=n) for n in (10, 2, 1, 100)])
    refresh_rollups()
    body = api.get("/api/v1/metrics/fuses", WINDOW).json()
    assert [row["value"] for row in body["by_round"]] == ["1", "2", "10", "> 10"]  # rounds past 10 share a bar
    by_round = api.get("/api/v1/metrics/distributions", {**WINDOW, "by": "round"}).json()
    assert [group["value"] for group in by_round["metrics"][0]["groups"]] == ["1", "2", "10", "100"]
