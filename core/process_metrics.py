"""The server's own metrics for operators, in the Prometheus format
(`GET /ops/metrics`, see the README): ingest events accepted and rejected,
request latency by route, webhook deliveries by outcome, Celery queue lag.
Per-project figures are elsewhere (`GET /metrics`, alerts.prometheus).

Several worker processes (`manage.py serve --workers N`) each count their
own requests; prometheus_client's multiprocess mode adds them up through
files in PROMETHEUS_MULTIPROC_DIR. `use_multiprocess_dir` sets that up
before the workers start (and `mark_process_dead` cleans up after one), so
any worker's /ops/metrics answers for all of them. Without the variable
(runserver, tests, one process) the counters live in the process.

The metrics here are labelled, so their values are created on first use:
in the worker, after `use_multiprocess_dir` has chosen the storage.
"""

import os
import shutil
import time
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Histogram, multiprocess, values
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest
from prometheus_client.registry import REGISTRY

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

INGEST_EVENTS = Counter(
    "denoise_ingest_events",
    "Events (spans, for OTLP) answered, by ingest route (/api/v1/ingest, /v1/traces) and outcome (accepted or rejected).",
    ["route", "outcome"],
)
REQUEST_LATENCY = Histogram(
    "denoise_http_request_duration_seconds", "Time to answer a request, by URL route (not raw path) and method.",
    ["route", "method"], buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
REQUESTS = Counter("denoise_http_requests", "Requests answered, by URL route, method and status class.",
                   ["route", "method", "status"])
WEBHOOK_DELIVERIES = Counter(
    "denoise_webhook_deliveries", "Webhook delivery attempts, by outcome (delivered, retrying, failed).", ["outcome"]
)


def use_multiprocess_dir(path: Path) -> None:
    """Empties `path` and makes the workers started from here count into it.
    Call before forking workers; files of an earlier run would otherwise add
    up with this one's."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    os.environ[MULTIPROC_ENV] = str(path)
    # prometheus_client picks its storage when first imported; it may have
    # been imported before the variable was set.
    values.ValueClass = values.get_value_class()


def mark_process_dead(pid: int) -> None:
    """After a worker exits (Gunicorn's child_exit): its live gauges stop counting."""
    if os.environ.get(MULTIPROC_ENV):
        multiprocess.mark_process_dead(pid)


class CeleryQueueLag:
    """Age of the oldest task waiting in each Celery queue on the Redis broker
    (publishing stamps `sent_at`, denoise_dashboard.celery) and the queue length.
    Read at scrape time: it is the broker's state, not a process's."""

    def __init__(self, redis_url: str, queues: list[str]):
        self.redis_url, self.queues = redis_url, queues

    def collect(self):
        import redis

        lag = GaugeMetricFamily("denoise_celery_queue_lag_seconds",
                                "Age of the oldest task waiting in the queue (0 when empty).", labels=["queue"])
        length = GaugeMetricFamily("denoise_celery_queue_length", "Tasks waiting in the queue.", labels=["queue"])
        client = redis.Redis.from_url(self.redis_url, socket_timeout=1, socket_connect_timeout=1)
        try:
            for queue in self.queues:
                waiting = client.llen(queue)
                oldest = client.lindex(queue, -1) if waiting else None  # kombu pushes left, pops right
                sent_at = sent_time(oldest)
                lag.add_metric([queue], max(0.0, time.time() - sent_at) if sent_at is not None else 0.0)
                length.add_metric([queue], waiting)
        except redis.RedisError:
            return  # no broker figures rather than a failed scrape
        finally:
            client.close()
        yield lag
        yield length


def sent_time(message: bytes | None) -> float | None:
    import orjson

    if not message:
        return None
    try:
        stamped = orjson.loads(message).get("headers", {}).get("sent_at")
    except (orjson.JSONDecodeError, AttributeError):
        return None
    return float(stamped) if isinstance(stamped, (int, float)) else None


def exposition(redis_url: str = "", queues: tuple[str, ...] = ()) -> bytes:
    """Every worker's counters (in multiprocess mode) or this process's, plus the broker's queues."""
    if os.environ.get(MULTIPROC_ENV):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    text = generate_latest(registry)
    if redis_url and queues:
        broker = CollectorRegistry()
        broker.register(CeleryQueueLag(redis_url, list(queues)))
        text += generate_latest(broker)
    return text
