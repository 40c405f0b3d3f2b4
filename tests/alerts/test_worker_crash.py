"""A Celery worker killed in the middle of a webhook delivery: the delivery is
still made (at least once) with the same webhook-id, by another worker, once
the dead worker's claim runs out. Real worker processes, real Redis broker."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from celery import Celery
from django.db import connection

from alerts import evaluation
from alerts.models import Delivery
from tests.support.alerts import SECRET, at_minute
from tests.support.events import node_event

REDIS_URL = "redis://127.0.0.1:6379/3"
ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_SECONDS = 2  # the workers' webhook timeout: their claims last 2 * 2 + 5 = 9 s


def redis_or_skip():
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1)
    try:
        client.ping()
    except redis.ConnectionError:
        pytest.skip("Redis is not running on 127.0.0.1:6379")
    return client


class Worker:
    def __init__(self, name: str, tmp_path: Path):
        self.log = tmp_path / f"{name}.log"
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "denoise_dashboard.settings",
            "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{connection.settings_dict['NAME']}",
            "REDIS_URL": REDIS_URL,
            "WEBHOOK_ALLOW_PRIVATE": "1",
            "WEBHOOK_TIMEOUT_SECONDS": str(TIMEOUT_SECONDS),
            "WEBHOOK_RETRY_BASE_SECONDS": "1",
            "DB_POOL_MAX": "2",
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "denoise_dashboard", "worker", "--pool=solo", "--concurrency=1",
             "--without-heartbeat", "--without-gossip", "--without-mingle", "--loglevel=INFO", "-n", f"{name}@%h"],
            cwd=ROOT, env=env, stdout=self.log.open("w"), stderr=subprocess.STDOUT,
        )

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_delivery_does_not_lose_it(make_project, receiver, tmp_path):
    broker = redis_or_skip()
    broker.flushdb()
    # Not the current app: shared tasks sent later in the run (after-commit refreshes) must stay eager.
    beat = Celery("beat-stand-in", broker=REDIS_URL, set_as_current=False)  # plays Celery beat: sends tasks by name

    from alerts import alert_rules
    from alerts.serializers import AlertRuleSerializer
    from provenance.ingest.write import ingest_events

    project, _ = make_project("crash")
    ingest_events(project, [node_event(f"f{i}", f"t{i}", seconds=i, fuse={"decision": "block", "reason": "x"})
                            for i in range(3)])
    data = AlertRuleSerializer(data={"name": "fuses", "conditions": [
        {"metric": "fuse_rate", "window": "10m", "op": ">", "threshold": 0.5}],
        "destinations": [{"type": "webhook", "url": receiver.url, "secret": SECRET}]})
    data.is_valid(raise_exception=True)
    alert_rules.create_rule(project, data.validated_data)

    # Attempt 1, inside the evaluation: refused by the receiver, so a retry is due.
    receiver.script = [503, ("hold", 30), 200]
    evaluation.tick(at_minute(1))
    delivery = Delivery.objects.get()
    assert delivery.status == "pending"

    workers = [Worker("first", tmp_path)]
    try:
        beat.send_task("alerts.tasks.retry_due_deliveries")
        assert receiver.holding.wait(30), (tmp_path / "first.log").read_text()
        workers[0].kill()  # attempt 2 is in flight: the receiver has the request, the worker dies
        receiver.release.set()

        workers.append(Worker("second", tmp_path))
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            beat.send_task("alerts.tasks.retry_due_deliveries")
            time.sleep(1)
            delivery.refresh_from_db()
            if delivery.status == "delivered":
                break
        assert delivery.status == "delivered", (tmp_path / "second.log").read_text()
    finally:
        for worker in workers:
            worker.stop()
        beat.close()
        broker.flushdb()

    received = receiver.received
    assert len(received) == 3
    assert {r.headers["webhook-id"] for r in received} == {delivery.webhook_id}
    assert all(r.verified for r in received)
    attempts = [(a.number, a.status, a.status_code) for a in delivery.attempts.order_by("number")]
    assert attempts == [(1, "failed", 503), (2, "interrupted", None), (3, "ok", 200)]
