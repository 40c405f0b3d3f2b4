"""The JSON parser of every API endpoint (ingest reads its own body).

DRF's stock parser decodes with the standard library, which recurses once per
level (a 3,000-deep body is a RecursionError, a 500) and reads a body of any
size. This one decodes with orjson (C, 1,024 levels at most), refuses bodies
over the API's size limit with a 413 (as ingest does) and deep or NUL-carrying
ones with a 400, each saying why."""

import orjson
from django.conf import settings
from rest_framework.exceptions import ParseError, UnsupportedMediaType, ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import BaseParser

from provenance.api.body import BodyTooLarge
from provenance.ingest.json_limits import MAX_BODY_DEPTH, PAST_64_BITS, body_problem, number_past_64_bits


class JSONParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.API_MAX_BODY_BYTES
        declared = (parser_context or {}).get("request")
        length = declared.META.get("CONTENT_LENGTH", "") if declared is not None else ""
        if length.isdigit() and int(length) > limit:
            raise BodyTooLarge(limit)
        raw = stream.read(limit + 1)
        if len(raw) > limit:
            raise BodyTooLarge(limit)
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as error:
            if "depth limit" in str(error):
                raise ParseError(f"body is nested deeper than {MAX_BODY_DEPTH} levels") from None
            raise ParseError(f"body is not valid JSON ({error})") from None
        problem = body_problem(data)
        if problem:
            raise ParseError(problem)
        if field := number_past_64_bits(data):
            raise ValidationError({field: f"{PAST_64_BITS}; nothing was stored"})
        return data


class JSONWithoutContentType(DefaultContentNegotiation):
    """A body sent with no Content-Type at all is read as JSON, as ingest reads
    it (`requests.post(url, data=json.dumps(...))` sends none); a type that is
    named and not JSON is still a 415."""

    def select_parser(self, request, parsers):
        if not request.content_type and parsers:
            return parsers[0]
        return super().select_parser(request, parsers)


def require_json(request) -> None:
    """For views that read their own body (ingest): the 415 every endpoint with
    the JSON parser answers to a body that names another type (as DRF, an
    empty body is not judged by its type)."""
    length = request.META.get("CONTENT_LENGTH") or "0"
    if length != "0" and JSONWithoutContentType().select_parser(request, [JSONParser()]) is None:
        raise UnsupportedMediaType(request.content_type)
