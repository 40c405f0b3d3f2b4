import os
import time

from celery import Celery
from celery.signals import before_task_publish

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "denoise_dashboard.settings")

app = Celery("denoise_dashboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@before_task_publish.connect
def stamp_sent_at(headers=None, **_):
    """When the task was queued: the Celery queue lag (core.process_metrics) is the oldest one's age."""
    if headers is not None:
        headers["sent_at"] = time.time()
