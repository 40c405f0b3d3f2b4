"""The embedded scheduler runs beat's schedule in-process when there is no broker."""

import threading

from celery import shared_task

from denoise_dashboard.scheduler import EmbeddedScheduler

ran = threading.Event()


@shared_task(name="tests.scheduler_probe")
def scheduler_probe():
    ran.set()


def test_embedded_scheduler_runs_due_tasks_by_name():
    scheduler = EmbeddedScheduler({"probe": {"task": "tests.scheduler_probe", "schedule": 0.2}}, tick_seconds=0.05)
    scheduler.start()
    try:
        assert ran.wait(5), "the scheduled task never ran"
    finally:
        scheduler.stop()
        scheduler.join(5)


def test_an_unknown_task_name_does_not_stop_the_scheduler():
    scheduler = EmbeddedScheduler({"missing": {"task": "tests.no_such_task", "schedule": 0.1}}, tick_seconds=0.05)
    scheduler.start()
    try:
        scheduler.stopped.wait(0.4)
        assert scheduler.is_alive()
    finally:
        scheduler.stop()
        scheduler.join(5)
