"""An in-process stand-in for Celery beat, for the embedded default.

Without Redis there is no broker and no beat process; `manage.py serve` starts
this thread instead. It reads the same CELERY_BEAT_SCHEDULE and runs each task
by name in-process, so the embedded product evaluates alerts every minute and
checks DAG health nightly exactly as a deployment with workers does.

Every server worker starts one, but with a `lock_path` only the holder of an
exclusive lock on that file runs the schedule: the jobs run once however many
workers there are, and when the holder exits (the kernel drops its lock)
another worker's scheduler takes over within a tick.
"""

import fcntl
import logging
import os
import threading
from datetime import datetime

from celery.schedules import crontab, schedule
from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

logger = logging.getLogger(__name__)


class EmbeddedScheduler(threading.Thread):
    def __init__(self, beat_schedule: dict | None = None, tick_seconds: float = 1.0, lock_path=None):
        super().__init__(name="embedded-scheduler", daemon=True)
        self.beat_schedule = beat_schedule if beat_schedule is not None else settings.CELERY_BEAT_SCHEDULE
        self.tick_seconds = tick_seconds
        self.lock_path = lock_path
        self.stopped = threading.Event()
        self.last_run: dict[str, datetime] = {}

    def run(self):
        from denoise_dashboard.celery import app

        if self.lock_path is not None:
            lock = self.lock_path.open("a")
            while not self.holds(lock):
                if self.stopped.wait(self.tick_seconds):
                    return
            logger.info("embedded scheduler running in process %s", os.getpid())
        app.loader.import_default_modules()
        started = timezone.now()
        for name in self.beat_schedule:
            self.last_run[name] = started
        while not self.stopped.wait(self.tick_seconds):
            for name, entry in self.beat_schedule.items():
                every = entry["schedule"]
                if not isinstance(every, (schedule, crontab)):
                    every = schedule(run_every=every)
                due, _ = every.is_due(self.last_run[name])
                if due:
                    self.last_run[name] = timezone.now()
                    self.run_task(entry["task"])

    @staticmethod
    def holds(lock) -> bool:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def run_task(self, task_name: str):
        from denoise_dashboard.celery import app

        task = app.tasks.get(task_name)
        if task is None:
            logger.warning("scheduled task %s is not registered", task_name)
            return
        try:
            task.apply()
        except Exception:
            logger.exception("scheduled task %s failed", task_name)
        finally:
            close_old_connections()

    def stop(self):
        self.stopped.set()
