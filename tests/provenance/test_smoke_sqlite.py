"""The embedded default (SQLite, no services) ingests and walks a DAG."""

import json
from pathlib import Path

import pytest
from django.db import connection

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "ticket-triage.json"

pytestmark = pytest.mark.sqlite_smoke


def test_embedded_default_ingests_and_answers_root_cause(api, ingest):
    if connection.vendor != "sqlite":
        pytest.skip("runs on the embedded default only (make test-sqlite)")
    batch = json.loads(EXAMPLE.read_text())["batch"]
    from tests.support.events import fuse_event, node_event

    batch += [
        node_event("s-frag", "smoke", confidence=0.9),
        node_event("s-final", "smoke", parents=["s-frag"], seconds=1, confidence=0.8),
        fuse_event("s-frag", trace_id="smoke"),
    ]
    result = ingest(*batch)
    assert result["errors"] == []
    assert {s["status"] for s in ingest(*batch)["successes"]} == {200}
    answer = api.get("/api/v1/traces/smoke/nodes/s-final/root-cause").json()
    assert answer["root_causes"] == [{"product_id": "s-frag", "reason": "fused", "confidence": 0.9, "trace_id": "smoke"}]
    assert answer["path"] == ["s-frag", "s-final"]


def test_embedded_default_keeps_the_fuse_loop(api, ingest):
    if connection.vendor != "sqlite":
        pytest.skip("runs on the embedded default only (make test-sqlite)")
    from provenance.models import Escalation
    from tests.provenance.ingest.test_ingest_fuse_loop import escalation_event
    from tests.support.events import node_event, review_event

    result = ingest(
        node_event("f1", "loop", confidence=0.2,
                   fuse={"decision": "block", "reason": "low", "reason_code": "below_block", "policy_version": 1}),
        node_event("f1-r", "loop", seconds=1, confidence=0.9, retry_of="f1", attempt=2),
        escalation_event("f1", "loop"),
    )
    assert result["errors"] == []
    assert Escalation.objects.get().closed_at is None
    ingest(review_event("loop", "correct", product_id="f1"))

    node = api.get("/api/v1/traces/loop/nodes/f1-r").json()
    assert (node["retry_of"], node["attempt"]) == ("f1", 2)
    [fuse] = api.get("/api/v1/traces/loop/nodes/f1").json()["fuses"]
    assert (fuse["reason_code"], fuse["policy_version"]) == ("below_block", 1)
    assert Escalation.objects.get().closed_by_review is not None
