"""A signed-in person reads their projects' API with their session (so the
browsable API works); writes still need a key; without either: 401."""

import pytest
from django.test import Client

from tests.support.events import node_event


@pytest.fixture
def stored_trace(ingest):
    ingest(node_event("frag-1", "t-1", confidence=0.4), node_event("final", "t-1", parents=["frag-1"], seconds=1))


def test_a_member_reads_the_api_with_their_session(member, stored_trace):
    response = member.get("/api/v1/traces/t-1")
    assert response.status_code == 200
    assert [n["product_id"] for n in response.json()["nodes"]] == ["frag-1", "final"]
    assert member.get("/api/v1/alert-rules").status_code == 200
    assert member.get("/api/v1/schema").status_code == 200


def test_the_browsable_api_renders_for_a_member(member, stored_trace):
    response = member.get("/api/v1/traces/t-1", HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    assert b"frag-1" in response.content
    # No write forms for a session: it could not send them.
    assert b'name="_content"' not in response.content


def test_writes_with_a_session_are_refused(member, project):
    rule = {"name": "r", "conditions": [{"metric": "fuse_rate", "window": "15m", "op": ">", "threshold": 0.2}]}
    response = member.post("/api/v1/alert-rules", rule, content_type="application/json")
    assert response.status_code == 403
    assert response.json()["error"].startswith("a signed-in session may only read")
    assert member.get("/api/v1/alert-rules").json() == []


def test_writes_with_a_session_and_a_csrf_token_are_refused_too(member_user, project):
    client = Client(enforce_csrf_checks=True)
    client.force_login(member_user)
    client.get("/login/")  # sets the CSRF cookie
    token = client.cookies["csrftoken"].value
    response = client.post("/api/v1/ingest", {"batch": [node_event("p", "t-9")]}, content_type="application/json",
                           HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 403
    assert response.json() == {
        "error": "a signed-in session may only read; send writes with Authorization: Bearer <api_key>"}
    assert client.get("/api/v1/traces/t-9").status_code == 404


def test_a_session_write_without_a_csrf_token_is_refused_the_same_way(member_user, project):
    client = Client(enforce_csrf_checks=True)
    client.force_login(member_user)
    response = client.delete("/api/v1/alert-rules/1")
    assert response.status_code == 403
    assert response.json()["error"].startswith("a signed-in session may only read")


def test_a_member_picks_a_project_and_never_sees_another(member, member_user, make_project, ingest):
    other, other_key = make_project("initech")
    other.members.add(member_user)
    stranger, _ = make_project("umbrella")
    from rest_framework.test import APIClient

    other_api = APIClient()
    other_api.credentials(HTTP_AUTHORIZATION=f"Bearer {other_key}")
    ingest(node_event("x", "t-other"), client=other_api)

    assert member.get("/api/v1/traces/t-other").status_code == 404  # the default project is "acme"
    assert member.get("/api/v1/traces/t-other?project=initech").status_code == 200
    response = member.get("/api/v1/traces?project=umbrella")
    assert response.status_code == 404
    assert response.json() == {"error": "Not found."}


def test_without_a_key_or_a_session_the_api_answers_401(client, db):
    for path in ("/api/v1/traces", "/api/v1/alert-rules", "/api/v1/", "/api/v1/health/latest"):
        response = client.get(path)
        assert response.status_code == 401, path
        assert response["WWW-Authenticate"] == 'Bearer realm="api"'
        assert response.json() == {"error": "an API key is required: Authorization: Bearer <api_key>"}


def test_a_bad_key_is_refused_even_with_a_session(member):
    response = member.get("/api/v1/traces", HTTP_AUTHORIZATION="Bearer dd_wrong")
    assert response.status_code == 401
    assert response.json() == {"error": "unknown or revoked API key"}


def test_the_docs_page_sends_anonymous_people_to_the_login_page(client, db):
    response = client.get("/api/v1/docs")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=/api/v1/docs")
