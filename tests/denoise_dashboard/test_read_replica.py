"""Reads on a streaming replica (contract: "Read replica"), with a primary and a
hot standby of this module's own (initdb + pg_basebackup on their own ports,
never the shared server) behind `manage.py serve`.

That a read was served by the replica is seen from outside: with the standby's
replay paused, a row written on the primary is missing from what it answers."""

import json
import subprocess
import sys
import time

import httpx
import pytest

from tests.support.own_postgres import OwnPostgres, manage, migrated_cluster
from tests.support.serving import REPO, Serve

SETTLE_SECONDS = 60  # the longest a state below may take to arrive on a loaded machine


def wait_for(state, what: str):
    deadline = time.monotonic() + SETTLE_SECONDS
    while not (value := state()):
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.1)
    return value


@pytest.fixture(scope="module")
def clusters():
    with migrated_cluster() as primary:
        standby = OwnPostgres(standby_of=primary)
        try:
            standby.start()
            yield primary, standby
        finally:
            standby.destroy()


@pytest.fixture(scope="module")
def keys(clusters):
    """Two keys of one project: the writer's, and another client's."""
    primary, _ = clusters
    writer = json.loads(manage(primary.url, "create_project", "replicated", "--json"))["api_key"]
    other = manage(primary.url, "shell", "-c", (
        "from django.apps import apps\n"
        "Project = next(m for m in apps.get_models() if m.__name__ == 'Project')\n"
        "print(Project.objects.get(slug='replicated').issue_api_key()[1])"
    )).strip().splitlines()[-1]
    return writer, other


def serve(clusters, tmp_path_factory, name, max_lag):
    primary, standby = clusters
    standby_url = standby.url
    return Serve(tmp_path_factory.mktemp(name), name=name, DATABASE_URL=primary.url,
                 DATABASE_REPLICA_URL=standby_url, REPLICA_MAX_LAG=str(max_lag))


def ingest(server, key, trace_id):
    answer = httpx.post(f"{server.url}/api/v1/ingest", headers={"Authorization": f"Bearer {key}"}, timeout=30, json={
        "batch": [{"id": f"e-{trace_id}", "type": "node", "timestamp": "2026-12-01T10:00:00Z",
                   "body": {"trace_id": trace_id, "product_id": f"p-{trace_id}", "agent_id": "a", "confidence": 0.9}}]})
    assert answer.status_code == 207 and answer.json()["errors"] == [], answer.text


def read(server, key, trace_id) -> int:
    return httpx.get(f"{server.url}/api/v1/traces/{trace_id}", headers={"Authorization": f"Bearer {key}"},
                     timeout=30).status_code


def confidences_counted(server, key) -> int:
    """What the metrics (rollups and raw SQL, not the ORM) count on the day of the test's nodes."""
    answer = httpx.get(f"{server.url}/api/v1/metrics/summary", headers={"Authorization": f"Bearer {key}"}, timeout=30,
                       params={"metric": "confidence", "start": "2026-12-01T00:00:00Z", "end": "2026-12-02T00:00:00Z"})
    assert answer.status_code == 200, answer.text
    return answer.json()["count"]


def on_standby(standby, trace_id) -> bool:
    return standby.sql(f"SELECT count(*) FROM provenance_trace WHERE trace_id = '{trace_id}'") == "1"


def test_reads_are_served_by_the_replica_and_a_writer_reads_its_own_writes(clusters, keys, tmp_path_factory):
    primary, standby = clusters
    writer, other = keys
    with serve(clusters, tmp_path_factory, "patient", max_lag=3600) as server:
        ingest(server, writer, "before-pause")
        wait_for(lambda: on_standby(standby, "before-pause"), "the standby replays the first trace")
        standby.sql("SELECT pg_wal_replay_pause()")
        try:
            ingest(server, writer, "while-paused")
            assert read(server, writer, "while-paused") == 200  # its own write: read on the primary
            assert read(server, other, "while-paused") == 404  # another client: the replica, standing still
            assert read(server, other, "before-pause") == 200
            assert (confidences_counted(server, writer), confidences_counted(server, other)) == (2, 1)
            assert not on_standby(standby, "while-paused")
        finally:
            standby.sql("SELECT pg_wal_replay_resume()")
        wait_for(lambda: read(server, other, "while-paused") == 200, "the replica catches up and serves the trace")


def test_a_replica_lagging_past_the_limit_is_not_used(clusters, keys, tmp_path_factory):
    primary, standby = clusters
    writer, other = keys
    with serve(clusters, tmp_path_factory, "strict", max_lag=1) as server:
        standby.sql("SELECT pg_wal_replay_pause()")
        try:
            ingest(server, writer, "behind-a-lagging-replica")
            # Within a second or two the replica counts as lagging and the primary answers everyone.
            wait_for(lambda: read(server, other, "behind-a-lagging-replica") == 200, "reads leave the lagging replica")
            assert not on_standby(standby, "behind-a-lagging-replica")
        finally:
            standby.sql("SELECT pg_wal_replay_resume()")


def test_an_unreachable_replica_is_skipped_without_an_error(clusters, keys, tmp_path_factory):
    primary, standby = clusters
    writer, other = keys
    with serve(clusters, tmp_path_factory, "survivor", max_lag=3600) as server:
        ingest(server, writer, "before-the-replica-dies")
        wait_for(lambda: read(server, other, "before-the-replica-dies") == 200, "the replica serves the trace")
        standby.stop()
        try:
            answers = [read(server, other, "before-the-replica-dies") for _ in range(10)]
            assert answers == [200] * 10
            ingest(server, writer, "after-the-replica-died")
            assert read(server, other, "after-the-replica-died") == 200
        finally:
            standby.start()


def test_a_replica_url_that_is_not_postgres_stops_the_start_with_one_line(tmp_path):
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=REPO, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "VAR_DIR": str(tmp_path),
                               "DATABASE_REPLICA_URL": "sqlite:///elsewhere.sqlite3"})
    assert done.returncode != 0
    assert "DATABASE_REPLICA_URL" in done.stderr
