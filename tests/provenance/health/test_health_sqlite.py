"""The health check on the embedded default (SQLite): the labelled corpus is
found exactly, grouped by (agent, step) and paged as on PostgreSQL."""

import pytest

from tests.provenance.health.health_runs import run_check
from tests.provenance.health_corpus import corpus

pytestmark = [pytest.mark.sqlite_smoke, pytest.mark.django_db]


def test_the_corpus_is_found_exactly_grouped_and_paged(api, ingest, member):
    events, labels = corpus(traces=120)
    for start in range(0, len(events), 1000):
        ingest(*events[start: start + 1000])
    run_check("--now", "2026-11-21T00:00:00Z")
    body = api.get("/api/v1/health/latest").json()
    assert {(f["kind"], f["trace_id"], f["product_id"]) for f in body["findings"]} == labels
    for kind in body["groups"]:
        assert kind["total"] == sum(1 for k, *_ in labels if k == kind["kind"])
        assert sum(g["count"] for g in kind["groups"]) == kind["total"]
        assert all(len(g["examples"]) == min(3, g["count"]) for g in kind["groups"])
    paged = api.get("/api/v1/health/latest?kind=cycle&offset=2&limit=3").json()
    cycles = sorted((t, p) for k, t, p in labels if k == "cycle")
    assert [(f["trace_id"], f["product_id"]) for f in paged["findings"]] == cycles[2:5]
    assert paged["matching"] == len(cycles)
    page = member.get("/p/acme/health/?kind=cycle&page=1")
    assert page.status_code == 200 and "page 1 of 1" in page.content.decode()
