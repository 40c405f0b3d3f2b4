"""`POST /v1/traces`: OTLP/HTTP trace exports, answered as the OTLP specification says.

A plain Django view rather than DRF: OTLP fixes the body of every answer
(an ExportTraceServiceResponse, or a google.rpc.Status for 4xx/5xx) in the
request's own encoding, which DRF's negotiation and error rendering would fight.
"""

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse
from django.views.decorators.csrf import csrf_exempt

from core.errors import ApiError
from provenance.api.body import read_body
from provenance.ingest import otlp
from provenance.ingest.write import ingest_events, with_counts
from tenancy.auth import check_key_scopes, key_for_request
from tenancy.scopes import scoped

# While the database is unreachable, exporters are told to come back (503 is retryable in OTLP).
UNAVAILABLE_RETRY_AFTER_SECONDS = 5


def answer(body: bytes, status: int, media: str, **headers) -> HttpResponse:
    response = HttpResponse(body, status=status, content_type=media)
    for name, value in headers.items():
        response[name.replace("_", "-")] = value
    return response


def failure(message: str, status: int, media: str, **headers) -> HttpResponse:
    return answer(otlp.encode_status(message, status, media), status, media, **headers)


@scoped(ingest_methods=frozenset({"POST"}))
@csrf_exempt
def traces(request):
    # Unsupported types are answered in JSON: whoever sent one reads it more easily.
    media = otlp.media_type(request.content_type or "")
    reply_media = media or otlp.JSON
    if request.method != "POST":
        return failure("use POST", 405, reply_media, Allow="POST")
    try:
        return export(request, media, reply_media)
    except (OperationalError, InterfaceError):
        return failure(
            "the database is unavailable; retry later", 503, reply_media,
            Retry_After=str(UNAVAILABLE_RETRY_AFTER_SECONDS),
        )


def export(request, media: str | None, reply_media: str) -> HttpResponse:
    key = key_for_request(request)
    if key is None:
        return failure(
            "an active API key is required: Authorization: Bearer <api_key>", 401, reply_media,
            WWW_Authenticate='Bearer realm="api"',
        )
    try:
        check_key_scopes(request, key, traces)
    except ApiError as error:
        return failure(error.message, error.status, reply_media)
    if media is None:
        return failure(
            f"unsupported Content-Type {request.content_type!r}; use {otlp.PROTOBUF} or {otlp.JSON}",
            415, reply_media,
        )
    limit = settings.INGEST_MAX_BYTES
    try:
        conversion = otlp.convert(otlp.decode_request(read_body(request, limit), media))
    except ApiError as error:  # too large, an unknown encoding, not an export
        return failure(error.message, error.status, media)

    rejections = list(conversion.rejections)
    # An export may hold more spans than one ingest batch: stored in batches of the
    # ingest limit, each its own transaction. If the database fails part-way the
    # exporter gets a 503 and resends; the stored part is then recognised as
    # already stored, since event ids are derived from the span ids.
    step, accepted = settings.INGEST_MAX_EVENTS, 0
    for start in range(0, len(conversion.events), step):
        result = ingest_events(key.project, conversion.events[start : start + step])
        rejections += [f"{otlp.span_label(e['id'])}: {e['message']}" for e in result.errors]
        accepted += len(result.successes)
    response = answer(otlp.encode_response(otlp.partial_success(conversion.span_count, rejections), media), 200, media)
    return with_counts(response, accepted, len(rejections))
