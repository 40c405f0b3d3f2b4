"""`GET /api/v1/health/latest`: the newest report, of the key's own project only."""

import pytest
from rest_framework.test import APIClient

from provenance import health
from tests.provenance.health.health_runs import run_check as check
from tests.support.events import node_event

pytestmark = pytest.mark.django_db


def test_before_the_first_run_the_report_is_empty(api):
    response = api.get("/api/v1/health/latest")
    assert response.status_code == 200
    assert response.json()["checked_at"] is None
    assert response.json()["findings"] == []


def test_the_newest_report_is_served(api, ingest):
    ingest(node_event("a", "t"), node_event("b", "t"))
    check("--now", "2026-11-20T03:00:00Z")
    ingest(node_event("c", "t", parents=["a"]))
    check("--now", "2026-11-21T03:00:00Z")
    body = api.get("/api/v1/health/latest").json()
    assert body["checked_at"] == "2026-11-21T03:00:00Z"
    assert body["findings"] == [{"kind": "orphan", "trace_id": "t", "product_id": "b",
                                 "detail": "no parents and no consumers"}]


def test_a_key_sees_only_its_own_projects_findings(api, other_api, ingest):
    ingest(node_event("a", "t"), node_event("b", "t"))
    check("--project", "acme")
    assert [f["product_id"] for f in api.get("/api/v1/health/latest").json()["findings"]] == ["a", "b"]
    assert other_api.get("/api/v1/health/latest").json() == {"checked_at": None, "finding_count": 0, "counts": {},
                                                             "findings": []}
    ingest(node_event("z", "tz", parents=["a"]), node_event("y", "tz"), client=other_api)
    check()
    assert [(f["product_id"], f["detail"]) for f in other_api.get("/api/v1/health/latest").json()["findings"]] == [
        ("y", "no parents and no consumers")
    ]
    assert len(api.get("/api/v1/health/latest").json()["findings"]) == 2


def test_findings_filter_by_kind(api, ingest):
    ingest(node_event("a", "t"), node_event("b", "t"), node_event("s", "t2", parents=["s"]))
    check()
    body = api.get("/api/v1/health/latest", {"kind": "cycle"}).json()
    assert [(f["kind"], f["product_id"]) for f in body["findings"]] == [("cycle", "s")]
    assert body["counts"] == {"broken_link": 0, "orphan": 2, "cycle": 1, "fused_indirect_use": 0,
                              "round_limit_exceeded": 0}


def test_an_unknown_kind_is_a_400_naming_the_field(api):
    response = api.get("/api/v1/health/latest", {"kind": "nonsense"})
    assert response.status_code == 400
    assert "kind" in response.json()["fields"]


def test_a_request_without_a_key_is_401():
    assert APIClient().get("/api/v1/health/latest").status_code == 401


def test_reading_the_report_costs_a_fixed_number_of_queries(api, ingest, django_assert_max_num_queries):
    ingest(*[node_event(f"n{i}", "t") for i in range(50)])
    check()
    with django_assert_max_num_queries(6):  # key, report, findings, groups' counts and examples
        assert len(api.get("/api/v1/health/latest").json()["findings"]) == 50


def test_the_alert_metric_reads_the_latest_finding_count(project, ingest):
    assert health.latest_finding_count(project) == 0
    ingest(node_event("a", "t"), node_event("b", "t"), node_event("c", "t"))
    check()
    assert health.latest_finding_count(project) == 3
    assert health.latest_finding_count(project.pk) == 3
