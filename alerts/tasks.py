"""Celery entry points; each is a thin wrapper and also a management command
(evaluate_alerts, retry_deliveries, watch_checks)."""

import threading
from functools import partial

from celery import shared_task
from django.conf import settings
from django.db import connections, transaction
from django.utils import timezone

from alerts import delivery, evaluation, watchdog


@shared_task(name="alerts.tasks.evaluate_alerts", ignore_result=True)
def evaluate_alerts():
    # Deliveries go to the delivery workers: a slow receiver never delays the next tick.
    evaluation.tick(timezone.now(), send=hand_off)


@shared_task(name="alerts.tasks.watch_checks", ignore_result=True)
def watch_checks():
    delivery.attempt_many(watchdog.notify(timezone.now()))


@shared_task(name="alerts.tasks.deliver", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def deliver(delivery_id: int):
    # Idempotent: a delivery that is not due (done, or claimed by a live runner) is left alone.
    delivery.attempt_many([delivery_id])


@shared_task(name="alerts.tasks.retry_due_deliveries", ignore_result=True)
def retry_due_deliveries():
    send_after_commit(delivery.due_ids(timezone.now()))


def send_after_commit(delivery_ids: list[int]) -> None:
    for delivery_id in delivery_ids:
        transaction.on_commit(partial(deliver.delay, delivery_id))


def hand_off(delivery_ids: list[int]) -> None:
    """The tick's deliveries to whoever sends them, without waiting for a receiver.
    With a broker: the delivery workers. Without one (the embedded default) tasks
    run eagerly, in the scheduler's thread, one after the other, so a slow receiver
    held the minute's tick; a thread of this process sends them instead. A process
    that exits mid-send leaves its claims to run out: retry_due_deliveries sends
    them again (at least once, as with a killed worker)."""
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        send_after_commit(delivery_ids)
    elif delivery_ids:
        threading.Thread(target=_attempt_in_background, args=(delivery_ids,), name="alert-deliveries",
                         daemon=True).start()


def _attempt_in_background(delivery_ids: list[int]) -> None:
    try:
        delivery.attempt_many(delivery_ids)
    finally:
        connections.close_all()
