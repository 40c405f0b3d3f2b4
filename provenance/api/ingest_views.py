import orjson
from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.views import APIView

from core.errors import ApiError
from provenance.api import shapes
from provenance.api.body import NOTHING_STORED, read_body
from provenance.api.parsers import require_json
from provenance.ingest.write import ingest_events, with_counts
from tenancy.scopes import AGENT_WRITES


class IngestView(APIView):
    """`POST /api/v1/ingest`: a batch of events, judged one by one (207)."""

    ingest_methods = AGENT_WRITES
    parser_classes = []

    @extend_schema(
        operation_id="ingest",
        summary="Send a batch of events",
        description="At most 1,000 events and 5 MiB (`413` otherwise, nothing stored); a body that is not JSON "
                    "or has no `batch` list is a `400`, nothing stored. Otherwise `207` with one result per event. "
                    "`Content-Encoding: gzip` is accepted.",
        request={"application/json": shapes.INGEST_REQUEST},
        responses={207: shapes.INGEST_RESULT},
        examples=[shapes.INGEST_EXAMPLE, shapes.INGEST_RESULT_EXAMPLE],
        tags=["ingest"],
    )
    def post(self, request):
        limit_events, limit_bytes = settings.INGEST_MAX_EVENTS, settings.INGEST_MAX_BYTES
        require_json(request)
        body = read_body(request, limit_bytes)
        try:
            payload = orjson.loads(body)
        except orjson.JSONDecodeError as error:
            raise ApiError(f"body is not valid JSON ({error}); {NOTHING_STORED}") from None
        if not isinstance(payload, dict) or not isinstance(payload.get("batch"), list):
            raise ApiError(f'body must be an object with a "batch" list; {NOTHING_STORED}')
        batch = payload["batch"]
        if len(batch) > limit_events:
            raise ApiError(f"batch has {len(batch)} events, more than {limit_events}; {NOTHING_STORED}", status=413)
        result = ingest_events(request.user.project, batch)
        # Rendered with orjson: a 1,000-result answer is on the hot path.
        response = HttpResponse(
            orjson.dumps(result.as_response()), status=status.HTTP_207_MULTI_STATUS, content_type="application/json"
        )
        return with_counts(response, len(result.successes), len(result.errors))
