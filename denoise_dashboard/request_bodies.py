"""Request bodies are read here, once, before any view, for every endpoint.

Django's ASGI handler has buffered the whole body in a file before a view runs,
but readers go by Content-Length, and the file is the handler's:

- A body sent without Content-Length (`Transfer-Encoding: chunked`) was taken
  for empty by DRF (a chunked PATCH changed nothing and answered 200), and
  Django's own size check answered 400 where the API answers 413. With
  Content-Length set to the size received, every reader sees the body it was
  sent and every size limit judges it as it would a declared one, in its
  endpoint's own answer format.
- A client that goes away mid-request has the handler close that file while
  the view's thread runs on: a view reading the body then failed with "I/O
  operation on closed file", a logged 500. Read here into memory, the body is
  the request's own; a body already closed is answered 400 and goes no further.

Multipart bodies with a Content-Length are left to Django's upload handlers,
which stream files to disk rather than into memory."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpResponseBadRequest
from django.http.request import UnreadablePostError

from core.errors import json_error


def read_request_bodies(get_response):
    def middleware(request):
        declared = request.META.get("CONTENT_LENGTH") or ""
        chunked = not declared and "HTTP_TRANSFER_ENCODING" in request.META
        if chunked and not isinstance(request, ASGIRequest):
            # A WSGI server hands a view Content-Length bytes only: the body would be lost.
            return json_error("a request body needs a Content-Length here", 411)
        if not chunked and (declared in ("", "0") or request.content_type.startswith("multipart/")):
            return get_response(request)
        try:
            size = len(request.body)
        except RequestDataTooBig:
            # More than any endpoint takes: each one refuses it by this length, in its own words.
            size = int(declared) if declared.isdigit() else settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1
        except (ValueError, UnreadablePostError):
            return HttpResponseBadRequest("the request body could not be read: the client closed the connection")
        if chunked:
            request.META["CONTENT_LENGTH"] = str(size)
        return get_response(request)

    return middleware
