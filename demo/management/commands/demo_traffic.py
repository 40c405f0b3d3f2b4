import itertools
import json
import random
import time
from datetime import timedelta

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from demo import accounts
from demo.model_quality import LiveNoise
from demo.workflow import Ticket, run_ticket
from denoiseflow import ConfidenceFuse, PolicyClient, Recorder

# A ticket's steps take some seconds; starting it this far back keeps its node
# timestamps in the past, where alert windows look.
TICKET_LEAD = timedelta(seconds=30)


class Command(BaseCommand):
    help = ("Keeps simulated ticket traffic flowing into a running dashboard through the SDK, with an 8-minute "
            "degradation in every half hour that trips the demo alerts.")

    def add_arguments(self, parser):
        parser.add_argument("--minutes", type=float, default=10, help="how long to run (default 10; 0: until Ctrl-C)")
        parser.add_argument("--rate", type=float, default=6, help="tickets per minute (default 6)")
        parser.add_argument("--url", default=None, help=f"dashboard URL (default {settings.SITE_ROOT})")
        parser.add_argument("--api-key", default=None, help="API key (default: the demo key from load_demo)")

    def handle(self, *args, minutes, rate, url, api_key, **options):
        if rate <= 0:
            raise CommandError("--rate must be above 0")
        api_key = api_key or self.demo_key()
        recorder = Recorder(url or settings.SITE_ROOT, api_key)
        # The agents' thresholds are the project's policy, as in load_demo: a change applied on the
        # dashboard reaches the next tickets within a minute (by ETag).
        policy = PolicyClient(recorder.url, api_key, refresh_interval=60)
        fuse = ConfidenceFuse.from_policy(client=policy)
        noise = LiveNoise()
        deadline = time.monotonic() + minutes * 60 if minutes > 0 else None
        rng = random.Random()
        self.stdout.write(f"Sending {rate:g} tickets a minute to {recorder.url} (Ctrl-C to stop)")
        sent = 0
        try:
            for sequence in itertools.count(1):
                if deadline is not None and time.monotonic() >= deadline:
                    break
                start = timezone.now() - TICKET_LEAD
                trace_id = f"live-{start:%Y%m%d-%H%M%S}-{sequence}"
                run_ticket(recorder, Ticket(trace_id, start, noise.noise(start), noise.drift(start)), fuse)
                sent += 1
                if sent % max(1, int(rate)) == 0:
                    state = "degraded" if noise.in_incident(start) else "normal"
                    self.stdout.write(f"{sent} tickets ({state}); {recorder.stats()}")
                time.sleep(rng.expovariate(rate / 60))
        except KeyboardInterrupt:
            pass
        policy.close()
        delivered = recorder.close(timeout=10)
        self.stdout.write(f"Done: {sent} tickets; {recorder.stats()}" + ("" if delivered else " (some undelivered)"))

    def demo_key(self) -> str:
        try:
            return json.loads(accounts.credentials_path().read_text())["api_key"]
        except (OSError, ValueError, KeyError) as error:
            raise CommandError("no --api-key given and no demo credentials found; run `manage.py load_demo` "
                               f"first ({error})") from None
