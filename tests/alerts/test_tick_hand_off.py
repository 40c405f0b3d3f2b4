"""The minute's tick never waits for a receiver: on the embedded default (no
broker, Celery tasks run eagerly) its events are fanned out to deliveries and
sent from a thread of the process, and the tick returns while the receiver
still holds the request."""

import time

import pytest
from django.utils import timezone

from alerts import tasks
from alerts.models import Delivery
from tests.support.alerts import SECRET
from tests.support.events import BASE_TIME, node_event

pytestmark = pytest.mark.django_db(transaction=True)


def wait_for_status(status: str, timeout: float = 15) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = Delivery.objects.get().status
        if found == status:
            return found
        time.sleep(0.05)
    return found


def test_the_tick_returns_while_its_receiver_holds_the_request(settings, create_rule, ingest, receiver):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.WEBHOOK_TIMEOUT_SECONDS = 15
    receiver.script = [("hold", 30)]
    create_rule(conditions=[{"metric": "node_count", "window": "1h", "op": ">", "threshold": 0}],
                destinations=[{"type": "webhook", "url": receiver.url, "secret": SECRET}])
    ingest(node_event("n1", seconds=(timezone.now() - BASE_TIME).total_seconds() - 60))

    tasks.evaluate_alerts.apply()  # the tick is over: its fan-out and first attempt run in a thread
    assert receiver.holding.wait(10)
    assert Delivery.objects.get().status == "pending"  # the receiver has not answered
    receiver.release.set()
    assert wait_for_status("delivered") == "delivered"
    assert [r.verified for r in receiver.received] == [True]
