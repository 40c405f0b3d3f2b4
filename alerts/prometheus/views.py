"""GET /metrics (project figures) and GET /ops/metrics (the server's own), for Prometheus."""

from django.conf import settings
from django.http import Http404, HttpResponse, JsonResponse
from django.utils.crypto import constant_time_compare
from django.views.decorators.http import require_GET

from alerts.prometheus.exposition import project_exposition
from core import process_metrics
from core.errors import ApiError, json_error
from tenancy.auth import check_key_scopes, key_for_request


def unauthorized(message: str) -> JsonResponse:
    response = json_error(message, 401)
    response["WWW-Authenticate"] = 'Bearer realm="denoise"'
    return response


@require_GET
def project_metrics(request):
    key = key_for_request(request)
    if key is None:
        return unauthorized("missing or unknown API key: send Authorization: Bearer <api_key>")
    try:
        check_key_scopes(request, key, project_metrics)
    except ApiError as error:
        return json_error(error.message, error.status)
    return HttpResponse(project_exposition(key.project), content_type=process_metrics.CONTENT_TYPE)


@require_GET
def ops_metrics(request):
    """Off unless OPS_METRICS_TOKEN is set: the figures span every project."""
    token = settings.OPS_METRICS_TOKEN
    if not token:
        raise Http404("set OPS_METRICS_TOKEN to serve the process metrics")
    scheme, _, given = (request.headers.get("Authorization") or "").partition(" ")
    if scheme.lower() != "bearer" or not constant_time_compare(given.strip(), token):
        return unauthorized("missing or wrong token: send Authorization: Bearer <OPS_METRICS_TOKEN>")
    body = process_metrics.exposition(settings.REDIS_URL, (settings.CELERY_TASK_DEFAULT_QUEUE,))
    return HttpResponse(body, content_type=process_metrics.CONTENT_TYPE)
