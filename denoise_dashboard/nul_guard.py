"""NUL characters in a URL or a page's form never reach a view.

No stored id can hold one (PostgreSQL text refuses NUL), so a path with one names
nothing: 404; a query parameter or a form field with one is malformed: 400.
Without this guard the database driver raises on the first lookup or save, a 500.
No browser sends a NUL from a text input, so refusing the whole form costs a
person nothing. The API's JSON bodies are judged by their own validation."""

from django.http import Http404
from django.views import defaults

from core.errors import json_error

API_PREFIXES = ("/api/", "/v1/")
FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


def refuse_nul(get_response):
    def middleware(request):
        problem = nul_problem(request)
        if problem is None:
            return get_response(request)
        status, message = problem
        if request.path_info.startswith(API_PREFIXES):
            return json_error(message, status)
        # The project's error pages, rendered without raising: a refused URL is not worth a logged traceback.
        if status == 404:
            return defaults.page_not_found(request, Http404(message))
        return defaults.bad_request(request, ValueError(message))

    return middleware


def nul_problem(request) -> tuple[int, str] | None:
    if "\x00" in request.path_info:
        return 404, "not found: the path contains a NUL character"
    query = request.META.get("QUERY_STRING", "")
    if "%00" in query or "\x00" in query:
        for name, values in request.GET.lists():
            if "\x00" in name or any("\x00" in value for value in values):
                shown = name.replace("\x00", "\\x00")
                return 400, f"{shown}: query parameters must not contain NUL characters"
    if request.method == "POST" and not request.path_info.startswith(API_PREFIXES) and request.content_type in FORMS:
        for name, values in request.POST.lists():
            if "\x00" in name or any("\x00" in value for value in values):
                shown = name.replace("\x00", "\\x00")
                return 400, f"{shown}: form fields must not contain NUL characters"
    return None
