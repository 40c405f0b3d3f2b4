"""Precision and recall of the DAG health check on a labelled corpus: every
planted fault is found (recall) and nothing else is (precision)."""

import pytest

from tests.provenance.health.health_runs import run_check
from tests.provenance.health_corpus import corpus

pytestmark = pytest.mark.django_db


def test_the_check_finds_exactly_the_labelled_faults(api, ingest):
    events, labels = corpus()
    for start in range(0, len(events), 1000):
        ingest(*events[start: start + 1000])
    # An hour on: every missing parent is past the grace period.
    run_check("--now", "2026-11-21T00:00:00Z")
    found = {(f["kind"], f["trace_id"], f["product_id"])
             for f in api.get("/api/v1/health/latest").json()["findings"]}
    hits = found & labels
    precision, recall = len(hits) / len(found), len(hits) / len(labels)
    kinds = sorted({kind for kind, *_ in labels})
    print(f"health corpus: {len(events)} events, {len(labels)} labelled faults of {len(kinds)} kinds, "
          f"{len(found)} findings: precision {precision:.3f}, recall {recall:.3f}")
    assert kinds == ["broken_link", "cycle", "fused_indirect_use", "orphan", "round_limit_exceeded"]
    assert found == labels
