"""One error shape for the whole API: `{"error": "...", "detail": ...}`."""

from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc, context):
    if isinstance(exc, exceptions.NotAuthenticated):
        exc = exceptions.NotAuthenticated("an API key is required: Authorization: Bearer <api_key>")
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    detail = response.data
    if isinstance(detail, dict) and set(detail) == {"detail"}:
        response.data = {"error": str(detail["detail"])}
    elif isinstance(detail, list):
        response.data = {"error": "; ".join(str(d) for d in detail)}
    else:
        response.data = {"error": "invalid request", "fields": detail}
    if response.status_code == status.HTTP_401_UNAUTHORIZED:
        response["WWW-Authenticate"] = 'Bearer realm="api"'
    return response


def error_response(message: str, status_code: int, **extra) -> Response:
    return Response({"error": message, **extra}, status=status_code)
