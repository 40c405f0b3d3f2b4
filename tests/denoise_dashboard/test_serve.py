"""`manage.py serve`: several worker processes behind one port, a graceful stop that answers the batch in flight, the embedded scheduler run by
exactly one worker."""

import fcntl
import os
import signal
import socket
import threading
import time

import httpx
import psycopg
import pytest
from django.db import connection

from provenance.models import Node
from tests.support.alerts import SECRET
from tests.support.events import node_event
from tests.support.receiver import running
from tests.support.serving import Serve, database_url, signed_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def tenant(make_project):
    return make_project("served")


@pytest.fixture
def server_env():
    if connection.vendor != "postgresql":
        pytest.skip("serve tests run against PostgreSQL")
    return {"DATABASE_URL": database_url(connection.settings_dict)}


def wait_for(condition, timeout: float = 60, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while not (result := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
    return result


def test_serve_runs_the_requested_workers_behind_one_port(tmp_path, server_env, tenant):
    _, key = tenant
    with Serve(tmp_path, workers=2, **server_env) as server:
        assert len(wait_for(lambda: len(server.worker_pids()) == 2 and server.worker_pids(), what="2 workers"))
        for i in range(6):
            server.ingest(key, node_event(f"n{i}", "served-trace"))
        page = httpx.get(f"{server.url}/login/")
        assert page.status_code == 200 and "Content-Security-Policy" in page.headers
    assert Node.objects.filter(trace__trace_id="served-trace").count() == 6


def test_sigterm_answers_the_batch_in_flight_before_exiting(tmp_path, server_env, tenant):
    _, key = tenant
    with Serve(tmp_path, **server_env) as server:
        answer: dict = {}
        # A session of its own (stats views are frozen within the polling session's transactions).
        blocker = psycopg.connect(conninfo(connection.settings_dict))
        blocker.execute("LOCK TABLE provenance_trace IN EXCLUSIVE MODE")  # the ingest will wait on this
        try:
            sender = threading.Thread(target=lambda: answer.update(
                response=server.ingest(key, *[node_event(f"g{i}", "graceful") for i in range(200)])))
            sender.start()
            wait_for(lambda: waiting_on_a_lock(), what="the ingest to wait on the lock")
            server.process.send_signal(signal.SIGTERM)
            wait_for(lambda: refuses_connections(server.port), what="the server to stop accepting")
        finally:
            blocker.rollback()
            blocker.close()
        sender.join(60)
        assert server.process.wait(60) == 0
    assert answer["response"].status_code == 207
    assert Node.objects.filter(trace__trace_id="graceful").count() == 200


def waiting_on_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
                       " AND datname = current_database()")
        return cursor.fetchone()[0] > 0


def conninfo(db: dict) -> str:
    return psycopg.conninfo.make_conninfo(dbname=db["NAME"], user=db["USER"], host=db["HOST"] or "127.0.0.1",
                                          port=db["PORT"] or 5432, password=db.get("PASSWORD") or None)


def refuses_connections(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


def test_the_embedded_scheduler_runs_in_one_worker_and_moves_when_it_dies(tmp_path, server_env):
    with Serve(tmp_path, workers=2, EMBEDDED_SCHEDULER="1", **server_env) as server:
        lock_file = tmp_path / "serve-var" / "scheduler.lock"
        workers = wait_for(lambda: len(server.worker_pids()) == 2 and server.worker_pids(), what="2 workers")
        first = wait_for(lambda: lock_holder(lock_file), what="a worker to take the scheduler lock")
        assert first in workers
        assert not can_lock(lock_file)  # held: nobody else may run the jobs

        os.kill(first, signal.SIGKILL)
        second = wait_for(lambda: (holder := lock_holder(lock_file)) not in (None, first) and holder,
                          what="another worker to take over the scheduler")
        assert second in server.worker_pids()


def lock_holder(path) -> int | None:
    """The pid holding a flock on `path`, from /proc/locks."""
    if not path.exists():
        return None
    inode = path.stat().st_ino
    for line in open("/proc/locks"):
        fields = line.split()
        if "FLOCK" in fields and fields[-3].endswith(f":{inode}"):
            return int(fields[-4])
    return None


def can_lock(path) -> bool:
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(handle, fcntl.LOCK_UN)
        return True


@pytest.fixture
def receiver():
    with running(SECRET) as hook:
        yield hook


def test_links_in_webhooks_point_at_the_port_serve_listens_on(tmp_path, server_env, tenant, receiver,
                                                              django_user_model):
    project, key = tenant
    project.members.add(django_user_model.objects.create_user("ops", password="pw-ops-12345"),
                        through_defaults={"role": "editor"})  # sends a test notification
    # No SITE_ROOT given: the address serve was started on is the one links name.
    with Serve(tmp_path, WEBHOOK_ALLOW_PRIVATE="1", **server_env) as server:
        created = httpx.post(f"{server.url}/api/v1/alert-rules", headers={"Authorization": f"Bearer {key}"}, json={
            "name": "fuses", "match": "all", "for": "0m",
            "conditions": [{"metric": "fuse_rate", "window": "15m", "op": ">", "threshold": 0.5}],
            "destinations": [{"type": "webhook", "url": receiver.url, "secret": SECRET}]})
        assert created.status_code == 201, created.text
        rule_page = f"{server.url}/alerts/{project.slug}/{created.json()['id']}/"
        person = signed_in(server.url, "ops", "pw-ops-12345")
        sent = person.post(rule_page + "test/", data={"csrfmiddlewaretoken": person.cookies["csrftoken"]},
                           headers={"Referer": rule_page})
        assert sent.status_code == 302, sent.text[:500]
        delivered = receiver.wait_for(1, timeout=60)
    assert delivered and delivered[0].json["url"] == rule_page
