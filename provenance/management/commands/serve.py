from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from denoise_dashboard.scheduler import EmbeddedScheduler


class Command(BaseCommand):
    help = "Serves pages, API and websockets; on the embedded default also runs the periodic jobs in-process."

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")

    def handle(self, *args, addrport, **options):
        if settings.EMBEDDED_SCHEDULER:
            EmbeddedScheduler().start()
            self.stdout.write("Embedded scheduler running: alerts every minute, DAG health nightly.")
        call_command("runserver", addrport, use_reloader=False)
