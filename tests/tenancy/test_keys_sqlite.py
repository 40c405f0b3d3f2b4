"""The embedded default (SQLite): an ingest-only key is made, sends events,
is refused a read, is rotated and revoked, on the portable paths."""

import pytest
from django.db import connection
from rest_framework.test import APIClient

from tests.support.events import node_event

pytestmark = pytest.mark.sqlite_smoke


def test_embedded_default_scopes_rotates_and_revokes(api):
    if connection.vendor != "sqlite":
        pytest.skip("runs on the embedded default only (make test-sqlite)")
    made = api.post("/api/v1/keys", {"name": "agent", "scopes": ["ingest"]}, format="json").json()
    agent = APIClient()
    agent.credentials(HTTP_AUTHORIZATION=f"Bearer {made['key']}")
    assert agent.post("/api/v1/ingest", {"batch": [node_event("p1")]}, format="json").status_code == 207
    assert agent.get("/api/v1/traces").status_code == 403

    rotated = api.post(f"/api/v1/keys/{made['id']}/rotate", {"grace_seconds": 0}, format="json").json()
    assert agent.get("/api/v1/policy").status_code == 401
    agent.credentials(HTTP_AUTHORIZATION=f"Bearer {rotated['key']}")
    assert agent.get("/api/v1/policy").status_code == 200

    assert api.delete(f"/api/v1/keys/{rotated['id']}").status_code == 204
    assert agent.get("/api/v1/policy").status_code == 401
