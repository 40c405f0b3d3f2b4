"""The scope gate: a request that names an API key is judged by its key's
scopes (tenancy/scopes.py) before anything reads its body or writes, for every
endpoint that takes a key: the HTTP API, OTLP (`/v1/traces`) and the
Prometheus scrape (`/metrics`).

The key is looked up here, once (tenancy.auth.key_for_request remembers it for
DRF and the plain views), on the primary: outside the replica's routing, so a
revocation holds on the very next request. A missing or unknown key goes on
to the endpoint, which answers 401 in its own format; a key outside its scopes
is answered 403 here, in the endpoint's format (JSON, or an OTLP Status)."""

from django.http import HttpResponse, JsonResponse
from django.urls import Resolver404, resolve

from core.errors import ApiError
from denoise_dashboard import outage
from denoise_dashboard.limits.answers import OTLP_PATH
from tenancy.auth import check_key_scopes, key_for_request

API_PATH = "/api/v1/"
PROMETHEUS_PATH = "/metrics"


def takes_a_key(path: str) -> bool:
    return path.startswith(API_PATH) or path.startswith(OTLP_PATH) or path == PROMETHEUS_PATH


def refused(request, error: ApiError) -> HttpResponse:
    if request.path.startswith(OTLP_PATH):
        from provenance.ingest import otlp

        media = otlp.media_type(request.content_type or "") or otlp.JSON
        return HttpResponse(otlp.encode_status(error.message, error.status, media), status=error.status,
                            content_type=media)
    return JsonResponse(error.body(), status=error.status)


class KeyScopeMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "HTTP_AUTHORIZATION" not in request.META or not takes_a_key(request.path):
            return self.get_response(request)
        try:
            view = resolve(request.path_info).func
        except Resolver404:
            return self.get_response(request)
        if outage.failing_fast():
            return self.get_response(request)  # answered 503 further in, without a lookup
        try:
            key = key_for_request(request)
        except outage.UNREACHABLE as error:
            # Answered as the endpoint would have been: by the outage middleware
            # (which then fails fast for a moment), or by OTLP's own view (which does not).
            if not request.path.startswith(OTLP_PATH):
                outage.note_unreachable(error)
            return outage.unavailable(request)
        if key is not None:
            try:
                check_key_scopes(request, key, view)
            except ApiError as error:
                return refused(request, error)
        return self.get_response(request)
