"""Counts every request into the process metrics (denoise_dashboard.process_metrics):
latency by URL route (the pattern, e.g. `api/v1/traces/<path:trace_id>`, so
agent-chosen ids never become label values), status class, and the events
the ingest endpoint accepted and rejected (read from its 207 answer, so the
ingest path itself stays free of bookkeeping)."""

import time

import orjson

from denoise_dashboard import process_metrics

INGEST_ROUTE = "api-ingest"
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
        if match is not None and match.url_name == INGEST_ROUTE and response.status_code == 207:
            count_ingest(response.content)
        return response


KNOWN_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}


def count_ingest(body: bytes) -> None:
    try:
        answer = orjson.loads(body)
    except orjson.JSONDecodeError:
        return
    process_metrics.INGEST_EVENTS.labels("accepted").inc(len(answer.get("successes") or []))
    process_metrics.INGEST_EVENTS.labels("rejected").inc(len(answer.get("errors") or []))
