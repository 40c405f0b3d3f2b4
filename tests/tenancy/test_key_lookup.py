"""The key check on the hot path: one indexed lookup per request (by the key's
hash, a unique index) and no write, the minute's last-used stamp aside; the
same lookup serves the scope gate and the view."""

from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from tests.support.events import node_event

KEY_TABLE = "provenance_apikey"


def key_queries(captured) -> list[str]:
    return [q["sql"] for q in captured.captured_queries if KEY_TABLE in q["sql"]]


def test_an_authenticated_ingest_looks_its_key_up_once_and_writes_no_key_row(api):
    api.post("/api/v1/ingest", {"batch": [node_event("p0")]}, format="json")  # stamps last_used_at

    with CaptureQueriesContext(connection) as captured:
        response = api.post("/api/v1/ingest", {"batch": [node_event("p1"), node_event("p2")]}, format="json")

    assert response.status_code == 207
    lookups = key_queries(captured)
    assert len(lookups) == 1, lookups
    assert lookups[0].lstrip().upper().startswith("SELECT") and '"key_hash" =' in lookups[0]


def test_the_first_request_of_a_minute_stamps_last_used_once(project, api):
    project.api_keys.update(last_used_at=None)

    with CaptureQueriesContext(connection) as captured:
        api.get("/api/v1/policy")
    with CaptureQueriesContext(connection) as again:
        api.get("/api/v1/policy")

    assert [q.split()[0].upper() for q in key_queries(captured)] == ["SELECT", "UPDATE"]
    assert [q.split()[0].upper() for q in key_queries(again)] == ["SELECT"]


def test_a_refused_request_costs_the_one_lookup_and_nothing_else(project):
    _, raw = project.issue_api_key("reader", ["read"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    client.get("/api/v1/policy")

    with CaptureQueriesContext(connection) as captured:
        response = client.post("/api/v1/ingest", {"batch": [node_event("p1")]}, format="json")

    assert response.status_code == 403
    assert len(captured) == 1 and KEY_TABLE in captured.captured_queries[0]["sql"]


def test_a_refused_request_does_not_stamp_the_keys_last_use(project):
    _, raw = project.issue_api_key("reader", ["read"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")

    assert client.post("/api/v1/ingest", {"batch": [node_event("p1")]}, format="json").status_code == 403
    assert project.api_keys.get(name="reader").last_used_at is None
    assert client.get("/metrics").status_code == 200
    assert project.api_keys.get(name="reader").last_used_at is not None
