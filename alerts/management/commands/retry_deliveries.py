from django.core.management.base import BaseCommand
from django.utils import timezone

from alerts import delivery


class Command(BaseCommand):
    help = "Makes the next attempt of every alert delivery whose retry is due (what Celery does every 15 s)."

    def handle(self, *args, **options):
        due = delivery.due_ids(timezone.now())
        delivery.attempt_many(due)
        self.stdout.write(f"{len(due)} due deliveries attempted")
