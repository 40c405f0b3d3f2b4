"""An attempt cut short by a runner killed mid-send is marked interrupted when
the delivery is tried again: a stored status, shown on the rule's page and in
the admin, told apart from an attempt still in progress."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from alerts.models import Delivery, DeliveryAttempt
from tests.support.alerts import SECRET
from tests.support.serving import database_url

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]


def wait_for(condition, what: str, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def attempts_shown(member, project, rule_id) -> str:
    page = member.get(f"/alerts/{project.slug}/{rule_id}/")
    assert page.status_code == 200
    return page.content.decode()


def test_an_attempt_cut_short_by_a_killed_runner_is_marked_interrupted(project, member, create_rule, receiver,
                                                                      tmp_path):
    rule = create_rule(destinations=[{"type": "webhook", "url": receiver.url, "secret": SECRET}],
                       conditions=[{"metric": "fuse_rate", "window": "15m", "op": ">", "threshold": 0.2}])
    destination_id = rule["destinations"][0]["id"]
    delivery = Delivery.objects.create(project=project, rule_id=rule["id"], destination_id=destination_id,
                                       target=receiver.url, kind="alert.test", payload='{"type": "test"}',
                                       next_attempt_at="2000-01-01T00:00:00Z")
    receiver.script = [("hold", 60), 200]
    env = {**os.environ, "DATABASE_URL": database_url(connection.settings_dict), "WEBHOOK_ALLOW_PRIVATE": "1",
           "WEBHOOK_TIMEOUT_SECONDS": "1", "EMBEDDED_SCHEDULER": "0"}
    env.pop("REDIS_URL", None)
    with open(tmp_path / "runner.log", "wb") as log:
        runner = subprocess.Popen([sys.executable, "manage.py", "retry_deliveries"], cwd=ROOT, env=env,
                                  stdout=log, stderr=subprocess.STDOUT)
    try:
        assert receiver.holding.wait(60), (tmp_path / "runner.log").read_text()
        assert DeliveryAttempt.objects.get().status == "in_progress"
        assert 'class="attempt attempt-in_progress"' in attempts_shown(member, project, rule["id"])
        runner.send_signal(signal.SIGKILL)  # mid-send: the receiver holds the request
        runner.wait(10)
    finally:
        if runner.poll() is None:
            runner.kill()
        receiver.release.set()

    # Its claim runs out (2 s + 5 s here), and the next runner tries again.
    wait_for(lambda: call_command("retry_deliveries") or Delivery.objects.get().status == "delivered",
             "the delivery to be made again")
    attempts = list(DeliveryAttempt.objects.filter(delivery=delivery).order_by("number")
                    .values_list("number", "status"))
    assert attempts == [(1, "interrupted"), (2, "ok")]
    page = attempts_shown(member, project, rule["id"])
    assert 'class="attempt attempt-interrupted"' in page and "interrupted" in page
    assert "stopped before" in DeliveryAttempt.objects.get(number=1).error
