from django.core.management.base import BaseCommand
from django.utils import timezone

from alerts import delivery, notifications


class Command(BaseCommand):
    help = ("Makes the deliveries of alert events whose fan-out did not run, then the next attempt of every "
            "alert delivery that is due (what Celery does every 15 s).")

    def handle(self, *args, **options):
        notifications.fan_out(notifications.pending_fan_outs())
        due = delivery.due_ids(timezone.now())
        delivery.attempt_many(due)
        self.stdout.write(f"{len(due)} due deliveries attempted")
