"""Retention on the embedded default: the same rules and the same digests on SQLite."""

import hashlib
from datetime import timedelta

import pytest
from django.db import connection

from tests.provenance.retention.retention_runs import apply_retention
from tests.support.events import BASE_TIME, fuse_event, node_event

pytestmark = pytest.mark.sqlite_smoke

TEXT = "é" * 300 + " the rest of a long answer"


def test_embedded_default_summarizes_and_deletes(api, ingest):
    if connection.vendor != "sqlite":
        pytest.skip("runs on the embedded default only (make test-sqlite)")
    ingest(
        node_event("sure", "t-old", confidence=0.95, content=TEXT),
        node_event("fused", "t-old", confidence=0.95, content=TEXT, parents=["sure"], seconds=1),
        fuse_event("fused", trace_id="t-old"),
        node_event("plain", "t-mid", confidence=0.95, content=TEXT, seconds=20 * 86400),
    )
    api.patch("/api/v1/project", {"retention": {"full_content_days": 0, "trace_days": 15}}, format="json")
    out = apply_retention("--now", (BASE_TIME + timedelta(days=21)).isoformat())
    assert "acme: summarized 1 nodes; deleted 1 traces (2 nodes)" in out
    assert api.get("/api/v1/traces/t-old").status_code == 404
    plain = api.get("/api/v1/traces/t-mid/nodes/plain").json()
    assert plain["content_tier"] == "summary"
    assert plain["content"] == TEXT[:280]
    assert plain["content_sha256"] == hashlib.sha256(TEXT.encode()).hexdigest()
