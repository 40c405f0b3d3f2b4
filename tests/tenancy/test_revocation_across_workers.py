"""Revocation and a rotated key's expiry hold from the very next request in
every worker of `manage.py serve` (nothing caches a key in a process): each
request below goes out on a connection of its own, so both workers answer."""

from datetime import timedelta

import httpx
import pytest
from django.db import connection
from django.utils import timezone

from tenancy.models import ApiKey
from tests.support.serving import Serve, database_url

pytestmark = pytest.mark.django_db(transaction=True)
REQUESTS = 12


def statuses(url: str, raw: str) -> set[int]:
    found = set()
    for _ in range(REQUESTS):
        with httpx.Client(timeout=30) as fresh:
            found.add(fresh.get(f"{url}/api/v1/policy", headers={"Authorization": f"Bearer {raw}"}).status_code)
    return found


def test_revoked_and_expired_keys_are_refused_at_once_by_every_worker(tmp_path, make_project):
    if connection.vendor != "postgresql":
        pytest.skip("serve tests run against PostgreSQL")
    project, admin_raw = make_project("served-keys")
    _, agent_raw = project.issue_api_key("agent", ["ingest"])
    _, rotated_raw = project.issue_api_key("rotated", ["ingest"])
    admin = {"Authorization": f"Bearer {admin_raw}"}
    with Serve(tmp_path, workers=2, DATABASE_URL=database_url(connection.settings_dict),
               API_RATE_LIMIT="0") as server:
        assert statuses(server.url, agent_raw) == {200}  # every worker has seen the key
        assert statuses(server.url, rotated_raw) == {200}
        agent = ApiKey.objects.get(project=project, name="agent")
        rotated = ApiKey.objects.get(project=project, name="rotated")

        assert httpx.delete(f"{server.url}/api/v1/keys/{agent.pk}", headers=admin).status_code == 204
        assert statuses(server.url, agent_raw) == {401}

        answer = httpx.post(f"{server.url}/api/v1/keys/{rotated.pk}/rotate", json={"grace_seconds": 600},
                            headers=admin, timeout=30)
        assert answer.status_code == 201
        assert statuses(server.url, rotated_raw) == {200}  # within its grace
        ApiKey.objects.filter(pk=rotated.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
        assert statuses(server.url, rotated_raw) == {401}
        assert statuses(server.url, answer.json()["key"]) == {200}
        log = server.log_text()
    assert "Traceback" not in log, log
