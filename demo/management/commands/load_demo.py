import time
from datetime import timedelta

from django.conf import settings
from django.core.management import call_command, get_commands
from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.urls import NoReverseMatch
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from demo import accounts, history, large_run, planted_faults, policy_story, truth_sets
from demo.local_server import serving
from demo.model_quality import HistoryNoise
from denoiseflow import Recorder
from provenance.models import Trace

# Jobs the schedule runs anyway; run once here so the dashboards and alerts are
# current the moment the server starts.
FOLLOW_UP_COMMANDS = ("refresh_metric_rollups", "evaluate_alerts", "check_dag_health")


class Command(BaseCommand):
    help = ("Creates the demo users, project, API key and alert rules, and records three days of simulated "
            "ticket traffic through the denoiseflow SDK. Idempotent: a second run only adds what is missing.")

    def add_arguments(self, parser):
        parser.add_argument("--scale", type=float, default=1.0,
                            help="share of the usual ticket volume, e.g. 0.1 for a quick run (default 1)")
        parser.add_argument("--now", default=None,
                            help="load as of this ISO 8601 moment, not later than now (default: now); a later "
                                 "load extends the story to its own moment at the regular pace")
        parser.add_argument("--port", type=int, default=0,
                            help="loopback port for the temporary in-process server (default: any free port)")

    def handle(self, *args, scale, port, verbosity, now=None, **options):
        if not 0 < scale <= 1:
            raise CommandError("--scale must be in (0, 1]")
        moment = timezone.now().replace(microsecond=0)
        if now is not None:
            parsed = parse_datetime(now)
            if parsed is None or parsed.tzinfo is None or parsed > moment + timedelta(seconds=1):
                raise CommandError("--now must be an ISO 8601 moment with its offset, not in the future")
            moment = parsed.replace(microsecond=0)
        started = time.monotonic()
        access = accounts.ensure_demo_access()
        phases = {"accounts": time.monotonic() - started}
        now = moment
        # The story stays where the first load put it; a later load only extends it to now.
        noise = HistoryNoise(policy_story.told_at(access.project) or now)
        wanted = [history.trace_id_at(t) for t in history.schedule(noise, scale, now)] + [history.BAD_ANSWER_TRACE]
        existing = set(
            Trace.objects.filter(project=access.project, trace_id__in=wanted).values_list("trace_id", flat=True)
        )

        with serving(port=port) as url:
            recorder = Recorder(url, access.api_key, batch_size=500, flush_interval=0.1, max_buffer=2_000_000,
                                backoff_base=0.2, max_backoff=2.0)
            # The history and the story's tickets run under the policy in force at their
            # moment: the demo's first version until the change its Calibration
            # suggests, the new one after (both read by ETag through one policy client).
            story = policy_story.Story(recorder, access.project, noise.now)
            filled = history.Filled()
            try:
                history.fill(recorder, noise, existing, story.fuse, filled, scale, now, between=(None, story.change))
                story.tell(before_change=True)
                story.change_policy()
                history.fill(recorder, noise, existing, story.fuse, filled, scale, now, between=(story.change, None))
                story.tell(before_change=False)
            finally:
                story.close()
            # Each part of the demo's story is one module and one line here.
            planted_faults.plant(recorder, noise.now)
            if scale >= 0.5:  # a quick run (tests, --scale 0.1) skips the 5,000-node run
                large_run.record(recorder, noise.now)
            # The embedded SQLite takes one writer at a time: let the SDK's
            # batches land before the parts that post on their own.
            recorder.flush(timeout=300)
            truth_sets.load(recorder)
            delivered = recorder.close(timeout=300)
        phases["history"] = time.monotonic() - started - sum(phases.values())
        stats = recorder.stats()
        if not delivered or stats["rejected"] or stats["failed"] or stats["dropped"]:
            raise CommandError(f"the demo history did not arrive whole: {stats}")
        planted_faults.settle(access.project)

        for name in FOLLOW_UP_COMMANDS:
            if name in get_commands():
                call_command(name, verbosity=0, stdout=self.stdout if verbosity > 1 else _Silent())
        phases["follow-up"] = time.monotonic() - started - sum(phases.values())
        analyze_tables()
        if verbosity > 1:
            self.stdout.write("phases: " + ", ".join(f"{k} {v:.1f} s" for k, v in phases.items()))
        self.report(access, filled, stats, time.monotonic() - started)

    def report(self, access, filled, stats, seconds):
        site = settings.SITE_ROOT.rstrip("/")
        try:
            bad = Trace.objects.get(project=access.project, trace_id=history.BAD_ANSWER_TRACE).get_absolute_url()
        except (Trace.DoesNotExist, NoReverseMatch):
            bad = f"/ (trace {history.BAD_ANSWER_TRACE})"
        rules = f"{access.rules} alert rules delivering to the webhook inbox"
        self.stdout.write(
            f"Demo project '{access.project.slug}': {filled.tickets} new tickets ({filled.skipped} already there), "
            f"{stats['sent']} events sent through the SDK, {rules}, in {seconds:.1f} s.\n"
            f"  Dashboard:  {site}/\n"
            f"  Log in:     demo / demo (the project's admin; viewer / viewer reads only; admin / admin for {site}/admin/)\n"
            f"  API key:    {access.api_key}\n"
            f"  Bad answer: {site}{bad}\n"
            f"  Live traffic: python manage.py demo_traffic --minutes 30 --rate 6"
        )


class _Silent:
    def write(self, *args, **kwargs):
        pass

    def flush(self):
        pass


def analyze_tables():
    """Fresh planner statistics for the tables the demo just filled. Autovacuum
    has not analyzed them yet when the server starts, and with none PostgreSQL
    guesses one row per table: the bad answers page's per-trace subqueries then
    bitmap-AND the whole project's index (project_id) with the trace's, for
    every node, and the page takes 7 s instead of under 1 s."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
