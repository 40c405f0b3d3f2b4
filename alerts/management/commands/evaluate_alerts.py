from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from alerts import evaluation


class Command(BaseCommand):
    help = ("Evaluates every enabled alert rule once as of --now (default: now) and makes the first "
            "delivery attempt of the notifications it produces.")

    def add_arguments(self, parser):
        parser.add_argument("--now", help="ISO 8601 time to evaluate at, e.g. 2026-11-20T09:15:00Z")

    def handle(self, *args, now=None, **options):
        moment = timezone.now()
        if now:
            moment = parse_datetime(now.strip().replace("Z", "+00:00"))
            if moment is None:
                raise CommandError(f"--now: {now!r} is not an ISO 8601 time")
            if timezone.is_naive(moment):
                moment = timezone.make_aware(moment, timezone.get_default_timezone())
        delivery_ids = evaluation.tick(moment)
        self.stdout.write(f"evaluated alert rules as of {moment.isoformat()}; {len(delivery_ids)} notification(s)")
