"""While the database cannot be reached: 503 with Retry-After, never 500.

API clients get the contract's JSON error (OTLP exporters an OTLP Status, which
they retry), people a styled "temporarily unavailable" page rendered without
touching the database. Requests wait at most DB_POOL_TIMEOUT for a connection
(settings), so the answer comes within about two seconds.
"""

import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse
from django.template import loader
from django.views import defaults

from denoise_dashboard.limits.answers import OTLP_PATH, refusal

RETRY_AFTER_SECONDS = 5
UNREACHABLE = (OperationalError, InterfaceError)
MESSAGE = "the database is unavailable; retry later"


def unavailable(request) -> HttpResponse:
    if request.path.startswith("/api/") or request.path.startswith(OTLP_PATH):
        return refusal(request, 503, MESSAGE, RETRY_AFTER_SECONDS)
    if request.path.startswith("/metrics") and "text/html" not in request.headers.get("Accept", ""):
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
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, UNREACHABLE):
            return unavailable(request)
        return None


def server_error(request, template_name="500.html"):
    """handler500: a database failure outside a view (a middleware saving the
    session, a template reading the user) is still an outage, not a bug."""
    error = sys.exc_info()[1]
    if isinstance(error, UNREACHABLE):
        return unavailable(request)
    return defaults.server_error(request, template_name)
