"""While the database cannot be reached: 503 with Retry-After, never 500.

API clients get the contract's JSON error (OTLP exporters an OTLP Status, which
they retry), people a styled "temporarily unavailable" page rendered without
touching the database. Requests wait at most DB_POOL_TIMEOUT for a connection
(settings), so the answer comes within about two seconds.
"""

import sys
import time

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse
from django.template import loader

from core import errors as api_errors
from core.replica import REPLICA, reading_alias
from denoise_dashboard.limits.answers import OTLP_PATH, refusal

RETRY_AFTER_SECONDS = 5
UNREACHABLE = (OperationalError, InterfaceError)
MESSAGE = "the database is unavailable; retry later"
# After a request found no connection in the pool's timeout, this process answers
# 503 at once for this long instead of making every request wait out the
# timeout too; then the next request tries the database again.
FAST_FAIL_SECONDS = 3.0
_fast_fail_until = 0.0


def unavailable(request) -> HttpResponse:
    if request.path.startswith("/api/") or request.path.startswith(OTLP_PATH):
        return refusal(request, 503, MESSAGE, RETRY_AFTER_SECONDS)
    if request.path.rstrip("/") == "/metrics":  # the Prometheus scrape
        response = HttpResponse(MESSAGE + "\n", status=503, content_type="text/plain")
    else:
        # No request context: the context processors would query the database.
        response = HttpResponse(loader.render_to_string("errors/unavailable.html"), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class DatabaseOutageMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if failing_fast() and not request.path.startswith("/static/"):
            return unavailable(request)
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, UNREACHABLE):
            note_unreachable(exception)
            return unavailable(request)
        return None


def failing_fast() -> bool:
    return time.monotonic() < _fast_fail_until


def forget_unreachable() -> None:
    """Back to trying the database on every request (tests start each from here)."""
    global _fast_fail_until
    _fast_fail_until = 0.0


def note_unreachable(exception) -> None:
    from psycopg_pool import PoolTimeout

    global _fast_fail_until
    # Only "no connection could be had": a deadlock or a query cancelled is one
    # request's failure, not the database's. Nor is a read replica going away:
    # the primary answers instead (replica_reads.py).
    if isinstance(exception.__cause__, PoolTimeout) and reading_alias() != REPLICA:
        _fast_fail_until = time.monotonic() + FAST_FAIL_SECONDS


def server_error(request):
    """handler500: a database failure outside a view (a middleware saving the
    session, a template reading the user) is still an outage, not a bug."""
    error = sys.exc_info()[1]
    if isinstance(error, UNREACHABLE):
        note_unreachable(error)
        return unavailable(request)
    return api_errors.server_error(request)
