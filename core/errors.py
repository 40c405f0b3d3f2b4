"""One error shape for the whole HTTP API:
`{"error": "<one line>", "fields": {"path.to.field": "message"}}`, `fields`
only when a field is at fault, its names dotted paths with indexes
(`items[3].expected`).

A use case refuses by raising an `ApiError` (or a subclass naming the kind of
refusal): it carries its status and the fields at fault, and knows nothing of
HTTP. The DRF exception handler below turns it into the shape, once, for every
app; it covers as well everything DRF raises (validation, auth, 404, 405, 415,
parse errors, throttling). The Django handlers cover what happens before or
outside a DRF view under `/api/` (an unknown path, a body Django itself
refuses), so no API client ever receives an HTML page.
"""

from django.http import JsonResponse
from django.shortcuts import render
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from core.params import BadParameter

API_PREFIXES = ("/api/",)


class ApiError(Exception):
    """A refusal in the contract's terms: `message` (one line), the HTTP
    `status`, and `fields` (dotted path -> what is wrong), none when no single
    field is at fault. Subclasses set their status and build their message."""

    status = 400

    def __init__(self, message: str, *, status: int | None = None, fields: dict[str, str] | None = None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        self.fields = dict(fields or {})

    def body(self) -> dict:
        body = {"error": one_line(self.message) or "invalid request"}
        if self.fields:
            body["fields"] = self.fields
        return body


def flatten_errors(errors, prefix: str = "") -> dict[str, str]:
    """DRF's nested errors as {"conditions[1].op": "reason"}."""
    flat: dict[str, str] = {}
    if isinstance(errors, dict):
        for key, value in errors.items():
            name = f"{prefix}[{key}]" if isinstance(key, int) else (f"{prefix}.{key}" if prefix else str(key))
            if key == "non_field_errors":
                name = prefix or "body"
            flat.update(flatten_errors(value, name))
    elif isinstance(errors, list) and errors and all(isinstance(e, str) for e in errors):
        flat[prefix or "body"] = " ".join(str(e) for e in errors)
    elif isinstance(errors, list):
        for index, value in enumerate(errors):
            if value:
                flat.update(flatten_errors(value, f"{prefix}[{index}]"))
    elif errors:
        flat[prefix or "body"] = str(errors)
    return flat


def invalid_body(errors) -> dict:
    """The error body for a serializer's errors: every field named, one line."""
    fields = flatten_errors(errors)
    message = "; ".join(f"{name}: {reason}" for name, reason in fields.items())
    return {"error": one_line(message) or "invalid request", "fields": fields}


def one_line(message: str) -> str:
    return " ".join(str(message).split())


def exception_handler(exc, context):
    # Imported here: rest_framework.views loads the configured parsers, which
    # raise ApiErrors, so it cannot be imported while this module loads.
    from rest_framework.views import exception_handler as drf_exception_handler
    from rest_framework.views import set_rollback

    if isinstance(exc, ApiError):
        set_rollback()
        response = Response(exc.body(), status=exc.status)
        if context.get("request") is not None:
            json_errors(context["request"])
        return response
    if isinstance(exc, exceptions.NotAuthenticated):
        exc = exceptions.NotAuthenticated("an API key is required: Authorization: Bearer <api_key>")
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    detail = response.data
    if isinstance(exc, exceptions.ValidationError):
        response.data = invalid_body(detail)
    elif isinstance(detail, dict) and "detail" in detail:
        response.data = {"error": one_line(detail["detail"])}
    elif isinstance(detail, list):
        response.data = {"error": one_line("; ".join(str(d) for d in detail))}
    else:
        response.data = invalid_body(detail)
    if response.status_code == status.HTTP_401_UNAUTHORIZED:
        response["WWW-Authenticate"] = 'Bearer realm="api"'
    if context.get("request") is not None:
        json_errors(context["request"])
    return response


def json_errors(request) -> None:  # a DRF Request
    """An error is JSON even where the answer asked for was another format
    (`?format=jsonl`); a person in the browsable API still sees it there."""
    renderer = getattr(request, "accepted_renderer", None)
    if renderer is not None and renderer.format not in ("json", "api"):
        request.accepted_renderer, request.accepted_media_type = JSONRenderer(), JSONRenderer.media_type


def error_response(message: str, status_code: int, **extra) -> Response:
    return Response({"error": one_line(message), **extra}, status=status_code)


def is_api_request(request) -> bool:
    return request.path.startswith(API_PREFIXES)


def json_error(message: str, status_code: int) -> JsonResponse:
    return JsonResponse({"error": message}, status=status_code)


# Django's error handlers (wired in denoise_dashboard/urls.py): JSON under /api/,
# the usual pages elsewhere.


def bad_request(request, exception=None):
    if is_api_request(request):
        reason = str(exception) if exception else ""
        return json_error(one_line(f"bad request: {reason}" if reason else "bad request"), 400)
    if isinstance(exception, BadParameter):
        return render(request, "400.html", {"reason": str(exception)}, status=400)
    return defaults.bad_request(request, exception)


def permission_denied(request, exception=None):
    if is_api_request(request):
        return json_error("permission denied", 403)
    return defaults.permission_denied(request, exception)


def page_not_found(request, exception=None):
    if is_api_request(request):
        return json_error(f"no such endpoint or object: {request.path}; see /api/v1/ for the endpoints", 404)
    return defaults.page_not_found(request, exception)


def server_error(request):
    if is_api_request(request):
        return json_error("internal server error", 500)
    return defaults.server_error(request)
