from django.core.management.base import BaseCommand
from django.utils import timezone

from alerts import delivery, watchdog
from core.command_options import add_now_argument


class Command(BaseCommand):
    help = ("The dead man's switch: when the alert tick or the nightly DAG health check has not run for twice "
            "its period, sends each project's destinations a 'checks are not running' notice (once per stall).")

    def add_arguments(self, parser):
        add_now_argument(parser, "judge the last runs")

    def handle(self, *args, now=None, **options):
        delivery_ids = watchdog.notify(now or timezone.now())
        delivery.attempt_many(delivery_ids)
        self.stdout.write(f"{len(delivery_ids)} notice(s) about checks not running")
