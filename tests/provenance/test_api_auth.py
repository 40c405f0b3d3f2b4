"""Auth: every /api/v1/ request carries a bearer key; missing, unknown or
revoked keys answer 401 with a Bearer challenge and store nothing."""

import pytest
from rest_framework.test import APIClient

from tenancy.models import ApiKey
from tests.provenance.stored import stored_rows
from tests.support.events import node_event

ENDPOINTS = [
    ("post", "/api/v1/ingest"),
    ("get", "/api/v1/traces"),
    ("get", "/api/v1/traces/t1"),
    ("get", "/api/v1/traces/t1/nodes/p1"),
    ("get", "/api/v1/traces/t1/nodes/p1/root-cause"),
    ("get", "/api/v1/traces/t1/nodes/p1/impact"),
]


def call(client, method: str, url: str):
    if method == "post":
        return client.post(url, {"batch": [node_event("p1")]}, format="json")
    return client.get(url)


def assert_unauthorized(response):
    assert response.status_code == 401, response.content
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert response.json()["error"]


@pytest.fixture
def stored_trace(ingest):
    ingest(node_event("p1"))


@pytest.mark.parametrize(("method", "url"), ENDPOINTS)
def test_missing_key_is_401_with_bearer_challenge(stored_trace, method, url):
    assert_unauthorized(call(APIClient(), method, url))


@pytest.mark.parametrize(("method", "url"), ENDPOINTS)
def test_unknown_key_is_401(stored_trace, method, url):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer dd_not-a-key-anyone-was-given")
    assert_unauthorized(call(client, method, url))


@pytest.mark.parametrize("header", ["Basic dXNlcjpwYXNz", "Bearer", "Bearer    ", "Token dd_x"])
def test_malformed_authorization_header_is_401(db, header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    assert_unauthorized(client.get("/api/v1/traces"))


def test_revoked_key_is_401_and_other_keys_of_the_project_keep_working(project, api):
    second, second_raw = project.issue_api_key("ci")
    second_client = APIClient()
    second_client.credentials(HTTP_AUTHORIZATION=f"Bearer {second_raw}")
    assert second_client.get("/api/v1/traces").status_code == 200

    second.revoke()

    assert_unauthorized(second_client.get("/api/v1/traces"))
    assert_unauthorized(second_client.post("/api/v1/ingest", {"batch": [node_event("p1")]}, format="json"))
    assert api.get("/api/v1/traces").status_code == 200


def test_unauthorized_ingest_stores_nothing(project):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer dd_wrong")
    client.post("/api/v1/ingest", {"batch": [node_event("p1")]}, format="json")
    APIClient().post("/api/v1/ingest", {"batch": [node_event("p2")]}, format="json")

    assert set(stored_rows().values()) == {0}


def test_several_keys_of_one_project_share_its_data(project, api, ingest):
    ingest(node_event("p1"))
    _, raw = project.issue_api_key("second")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")

    assert [n["product_id"] for n in client.get("/api/v1/traces/t1").json()["nodes"]] == ["p1"]


def test_only_a_hash_of_the_key_is_stored(project_and_key):
    project, raw = project_and_key
    stored = ApiKey.objects.get(project=project)
    assert raw not in {stored.key_hash, stored.prefix, stored.name}
    assert raw.startswith(stored.prefix)
