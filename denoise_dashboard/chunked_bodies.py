"""A request body sent without Content-Length (`Transfer-Encoding: chunked`) is
measured here, once, for every endpoint.

Django's ASGI handler has buffered the whole body before any view runs, but
readers go by Content-Length: DRF takes a body without one for empty (a chunked
PATCH changed nothing and answered 200) and Django's own size check answers 400
where the API answers 413. With Content-Length set to the size received, every
reader sees the body it was sent and every size limit judges it as it would a
declared one, in its endpoint's own answer format."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.handlers.asgi import ASGIRequest
from django.http import JsonResponse


def measure_chunked_bodies(get_response):
    def middleware(request):
        if request.META.get("CONTENT_LENGTH") or "HTTP_TRANSFER_ENCODING" not in request.META:
            return get_response(request)
        if not isinstance(request, ASGIRequest):
            # A WSGI server hands a view Content-Length bytes only: the body would be lost.
            return JsonResponse({"error": "a request body needs a Content-Length here"}, status=411)
        try:
            size = len(request.body)
        except RequestDataTooBig:
            # More than any endpoint takes: each one refuses it by this length, in its own words.
            size = settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1
        request.META["CONTENT_LENGTH"] = str(size)
        return get_response(request)

    return middleware
