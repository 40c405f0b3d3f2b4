from django.core.management.base import BaseCommand
from django.utils import timezone

from alerts import evaluation
from core.command_options import add_now_argument


class Command(BaseCommand):
    help = ("Evaluates every enabled alert rule once as of --now (default: now) and makes the first "
            "delivery attempt of the notifications it produces.")

    def add_arguments(self, parser):
        add_now_argument(parser, "evaluate the rules")

    def handle(self, *args, now=None, **options):
        moment = now or timezone.now()
        delivery_ids = []
        evaluation.tick(moment, send=lambda event_ids: delivery_ids.extend(evaluation.send_now(event_ids)))
        self.stdout.write(f"evaluated alert rules as of {moment.isoformat()}; {len(delivery_ids)} notification(s)")
