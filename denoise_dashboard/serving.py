"""The production web server behind `manage.py serve`: Gunicorn managing Uvicorn workers.

Why this pair:

- Uvicorn speaks HTTP/1.1 and websockets (the live pages) with httptools and
  uvloop, the fastest ASGI path we measured for the ingest API.
- Gunicorn is the process manager: it binds the socket once and shares it with N
  worker processes, restarts a worker that dies, and on SIGTERM stops accepting
  and gives every worker `graceful_timeout` seconds to finish the requests it
  holds, so an ingest batch in flight is answered (and committed) before the
  process exits. Its hooks (`post_worker_init`, `child_exit`) are where
  per-worker start-up and clean-up go (the embedded scheduler, Prometheus'
  multiprocess files of process_metrics.py). This is the deployment the
  Uvicorn project recommends (`uvicorn-worker`).
- `uvicorn --workers` alone restarts workers too but has no hooks; Daphne has
  no workers at all and would need a process manager of its own.

Ctrl-C (SIGINT) is treated like SIGTERM: a graceful stop, since `make run` is
stopped that way and a batch in flight should still be answered.
"""

import os
import signal
from pathlib import Path

from django.conf import settings
from gunicorn.app.base import BaseApplication
from gunicorn.arbiter import Arbiter
from uvicorn_worker import UvicornWorker

from core import process_metrics

GRACEFUL_TIMEOUT_SECONDS = 30


class DashboardWorker(UvicornWorker):
    """Uvicorn in a Gunicorn worker, as Django wants it served."""

    CONFIG_KWARGS = {
        **UvicornWorker.CONFIG_KWARGS,
        # Django's ASGI handler does not implement the lifespan protocol.
        "lifespan": "off",
    }

    def __init__(self, *args, **kwargs):
        # X-Forwarded-For/-Proto are believed only when the operator says a proxy
        # sets them: otherwise any client could pick the address the login and
        # API-key throttles count against.
        self.CONFIG_KWARGS = {**self.CONFIG_KWARGS, "proxy_headers": settings.TRUST_PROXY_HEADERS}
        super().__init__(*args, **kwargs)


def default_workers() -> int:
    """One per CPU core when Redis carries the channel layer between processes;
    one on the embedded default, whose in-process layer cannot: a node ingested
    by one worker would never reach a live page held open by another."""
    if not settings.REDIS_URL:
        return 1
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class GracefulArbiter(Arbiter):
    def handle_int(self):
        self.handle_term()


def post_worker_init(worker):
    # Every worker asks; the scheduler's lock lets exactly one run the jobs, and
    # another takes over if that worker is restarted.
    if settings.EMBEDDED_SCHEDULER:
        from denoise_dashboard.scheduler import EmbeddedScheduler

        settings.VAR_DIR.mkdir(parents=True, exist_ok=True)
        EmbeddedScheduler(lock_path=settings.VAR_DIR / "scheduler.lock").start()


def child_exit(server, worker):
    process_metrics.mark_process_dead(worker.pid)


def multiprocess_dir() -> Path:
    """Where the workers' Prometheus counters add up (PROMETHEUS_MULTIPROC_DIR, else var/prometheus)."""
    return Path(os.environ.get(process_metrics.MULTIPROC_ENV) or settings.VAR_DIR / "prometheus")


class DashboardServer(BaseApplication):
    def __init__(self, bind: str, workers: int, **options):
        self.options = {
            "bind": bind,
            "workers": workers,
            "worker_class": "denoise_dashboard.serving.DashboardWorker",
            "graceful_timeout": GRACEFUL_TIMEOUT_SECONDS,
            # Sync views run in a thread while the worker's loop keeps notifying
            # the arbiter, so a long batch does not look like a hung worker.
            "timeout": 120,
            "keepalive": 5,
            "forwarded_allow_ips": ",".join(settings.FORWARDED_ALLOW_IPS),
            "accesslog": "-" if settings.SERVE_ACCESS_LOG else None,
            "errorlog": "-",
            "loglevel": "info",
            "post_worker_init": post_worker_init,
            "child_exit": child_exit,
            # Gunicorn's runtime control socket sits at one path per user: two
            # instances on one machine would fight over it, and nothing uses it.
            "control_socket_disable": True,
            **options,
        }
        super().__init__()

    def load_config(self):
        for name, value in self.options.items():
            if value is not None:
                self.cfg.set(name, value)

    def load(self):
        from denoise_dashboard.asgi import application

        return application

    def run(self):
        # Connections opened by the command's own start-up must not be shared by forked workers.
        from django.db import connections

        for connection in connections.all(initialized_only=True):
            connection.close()
            if getattr(connection, "pool", None) is not None:
                connection.close_pool()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        # Before the workers fork: each counts into its own file there, and any one's /ops/metrics sums them.
        process_metrics.use_multiprocess_dir(multiprocess_dir())
        GracefulArbiter(self).run()
