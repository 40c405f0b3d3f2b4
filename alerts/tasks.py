"""Celery entry points; each is a thin wrapper and also a management command
(evaluate_alerts, retry_deliveries, watch_checks)."""

import threading
from functools import partial

from celery import shared_task
from django.conf import settings
from django.db import connections, transaction
from django.utils import timezone

from alerts import delivery, evaluation, notifications, watchdog


@shared_task(name="alerts.tasks.evaluate_alerts", ignore_result=True)
def evaluate_alerts():
    # Deliveries go to the delivery workers: a slow receiver never delays the next tick.
    evaluation.tick(timezone.now(), send=hand_off)


@shared_task(name="alerts.tasks.watch_checks", ignore_result=True)
def watch_checks():
    delivery.attempt_many(watchdog.notify(timezone.now()))


@shared_task(name="alerts.tasks.fan_out", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def fan_out(event_ids: list[int]):
    # Idempotent: an event already fanned out (by the periodic job, or this message delivered twice) is skipped.
    send_after_commit(notifications.fan_out(event_ids))


@shared_task(name="alerts.tasks.deliver", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def deliver(delivery_id: int):
    # Idempotent: a delivery that is not due (done, or claimed by a live runner) is left alone.
    delivery.attempt_many([delivery_id])


@shared_task(name="alerts.tasks.retry_due_deliveries", ignore_result=True)
def retry_due_deliveries():
    # Fan-outs whose message was lost first: their deliveries are due at once.
    notifications.fan_out(notifications.pending_fan_outs())
    send_after_commit(delivery.due_ids(timezone.now()))


def send_after_commit(delivery_ids: list[int]) -> None:
    for delivery_id in delivery_ids:
        transaction.on_commit(partial(deliver.delay, delivery_id))


def hand_off(event_ids: list[int]) -> None:
    """The tick's events to whoever fans them out and sends them, without
    waiting for a receiver. With a broker: the delivery workers. Without one
    (the embedded default) tasks run eagerly, in the scheduler's thread, one
    after the other, so a slow receiver held the minute's tick; a thread of this
    process sends them instead. A process that exits mid-way leaves its events
    pending or its claims to run out: retry_due_deliveries fans them out or
    sends them again (at least once, as with a killed worker)."""
    if not event_ids:
        return
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        transaction.on_commit(partial(fan_out.delay, list(event_ids)))
    else:
        threading.Thread(target=_send_in_background, args=(event_ids,), name="alert-deliveries",
                         daemon=True).start()


def _send_in_background(event_ids: list[int]) -> None:
    try:
        evaluation.send_now(event_ids)
    finally:
        connections.close_all()
