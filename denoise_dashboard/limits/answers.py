"""How a refused API request is answered: the contract's JSON error shape under
/api/v1/, an OTLP Status in the request's own encoding under /v1/traces."""

import math

from django.http import HttpResponse

from core.errors import json_error

OTLP_PATH = "/v1/traces"


def refusal(request, status: int, message: str, retry_after: float) -> HttpResponse:
    seconds = str(max(1, math.ceil(retry_after)))
    if request.path.startswith(OTLP_PATH):
        from provenance.ingest import otlp

        media = otlp.media_type(request.content_type or "") or otlp.JSON
        response = HttpResponse(otlp.encode_status(message, status, media), status=status, content_type=media)
    else:
        response = json_error(message, status)
    response["Retry-After"] = seconds
    return response
