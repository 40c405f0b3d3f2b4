from celery import shared_task

from metrics.rollups.refresh import refresh_rollups as refresh


@shared_task(name="metrics.tasks.refresh_rollups", ignore_result=True)
def refresh_rollups():
    """Every 30 s from beat; also `manage.py refresh_metric_rollups`."""
    return str(refresh())
