import os

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from denoise_dashboard.serving import DashboardServer, default_workers


class Command(BaseCommand):
    help = (
        "Serves pages, the HTTP API and websockets with the production server (Gunicorn with Uvicorn "
        "workers). Workers default to one per CPU core when REDIS_URL is set, and to 1 on the embedded "
        "default, whose in-process channel layer cannot carry live updates between processes. On the "
        "embedded default the periodic jobs also run in-process, once. SIGTERM or Ctrl-C stops "
        "gracefully: requests in flight are answered first. For development use runserver."
    )

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000", help="HOST:PORT to listen on")
        parser.add_argument(
            "--workers", type=int, default=None,
            help="worker processes (default: CPU cores with REDIS_URL, else 1; more than 1 without "
                 "Redis breaks live pages, which then only see what their own worker ingested)",
        )

    def handle(self, *args, addrport, workers, **options):
        if workers is not None and workers < 1:
            raise CommandError("--workers must be 1 or more")
        host, sep, port = addrport.rpartition(":")
        if not sep or not port.isdigit():
            raise CommandError(f"{addrport!r}: expected HOST:PORT, e.g. 127.0.0.1:8000")
        if "SITE_ROOT" not in os.environ:
            # Links in webhooks and notifications point at this server, not at the :8000 default.
            shown_host = "127.0.0.1" if host in ("", "0.0.0.0", "::") else host
            settings.SITE_ROOT = os.environ["SITE_ROOT"] = f"http://{shown_host}:{port}"
        workers = workers or default_workers()
        if workers > 1 and not settings.REDIS_URL:
            self.stderr.write(
                "warning: without REDIS_URL each worker has its own channel layer; live pages only "
                "see nodes ingested by the worker that holds their websocket."
            )
        if settings.EMBEDDED_SCHEDULER:
            self.stdout.write("Embedded scheduler: alerts every minute, DAG health nightly (in one worker).")
        DashboardServer(f"{host}:{port}", workers).run()
