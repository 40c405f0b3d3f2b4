"""Counts every request into the process metrics (core.process_metrics):
latency by URL route (the pattern, e.g. `api/v1/traces/<path:trace_id>`, so
agent-chosen ids never become label values), status class, and the events
the ingest endpoints (JSON and OTLP) accepted and rejected, by route (read
from the counts their answer carries, so the ingest path itself stays free
of bookkeeping)."""

import time

from core import process_metrics
from provenance.ingest.write import COUNTS_ATTRIBUTE

UNMATCHED = "(unmatched)"


class RequestMetricsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = ("/" + match.route) if match is not None and match.route is not None else UNMATCHED
        method = request.method if request.method in KNOWN_METHODS else "other"
        process_metrics.REQUEST_LATENCY.labels(route, method).observe(time.perf_counter() - started)
        process_metrics.REQUESTS.labels(route, method, f"{response.status_code // 100}xx").inc()
        counts = getattr(response, COUNTS_ATTRIBUTE, None)
        if counts is not None:
            accepted, rejected = counts
            process_metrics.INGEST_EVENTS.labels(route, "accepted").inc(accepted)
            process_metrics.INGEST_EVENTS.labels(route, "rejected").inc(rejected)
        return response


KNOWN_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
