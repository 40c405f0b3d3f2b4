"""The embedded default (SQLite): every metric and dashboard answers from the
portable raw paths, and the refresh is a harmless no-op."""

from datetime import timedelta

import pytest
from django.db import connection

from metrics.rollups.refresh import refresh_rollups
from metrics.values import window_values
from tests.support.events import BASE_TIME, node_event, review_event

pytestmark = pytest.mark.sqlite_smoke


def test_embedded_default_answers_every_dashboard(api, ingest, project):
    if connection.vendor != "sqlite":
        pytest.skip("runs on the embedded default only (make test-sqlite)")
    ingest(node_event("a", seconds=1, confidence=0.3, step="s", metrics={"semantic_entropy": 1.5},
                      fuse={"decision": "block", "reason": "low"}),
           node_event("b", seconds=2, confidence=0.9, parents=["a"], source_type="final_answer"),
           review_event("t1", "incorrect"))
    assert refresh_rollups().skipped
    values = window_values(project, BASE_TIME, BASE_TIME + timedelta(minutes=5))
    assert (values["node_count"], values["consecutive_fuses"], values["high_uncertainty_ratio"]) == (2, 1, 1.0)
    window = {"start": BASE_TIME.isoformat(), "end": (BASE_TIME + timedelta(hours=6)).isoformat()}
    for name in ("overview", "fuses", "distributions", "drift", "calibration", "options"):
        assert api.get(f"/api/v1/metrics/{name}", window).status_code == 200, name
    assert api.get("/api/v1/metrics/calibration", window).json()["count"] == 1
    assert api.get("/api/v1/metrics/fuses", window).json()["top_reasons"]["block"] == [{"reason": "low", "count": 1}]


def test_embedded_default_answers_exact_summaries(api, ingest):
    if connection.vendor != "sqlite":
        pytest.skip("runs on the embedded default only (make test-sqlite)")
    ingest(*[node_event(f"n{i}", seconds=i, confidence=c, metrics={"samples": 5})
             for i, c in enumerate([0.2, 0.4, 0.4, 0.9])])
    window = {"start": BASE_TIME.isoformat(), "end": (BASE_TIME + timedelta(hours=1)).isoformat()}
    answer = api.get("/api/v1/metrics/summary", {"metric": "confidence", **window}).json()
    assert (answer["count"], answer["min"], answer["max"], answer["p50"], answer["p95"]) == (4, 0.2, 0.9, 0.4, 0.9)
    assert answer["mean"] == pytest.approx(0.475) and answer["std"] == pytest.approx(0.25860201)
    samples = api.get("/api/v1/metrics/summary", {"metric": "samples", **window}).json()
    assert (samples["mean"], samples["std"], samples["p99"]) == (5, 0, 5)
