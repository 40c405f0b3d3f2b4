"""GET /api/v1/metrics/…: the dashboards' series as JSON, for the API key's project."""

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import ApiError
from core.openapi import FREE_OBJECT, INTEGER, NUMBER, STRING, array, nullable, obj
from metrics.catalog import check_metrics
from metrics.dashboards import DASHBOARDS
from metrics.filter_options import filter_options
from metrics.params import ChartParamsSerializer, SummaryParamsSerializer
from metrics.values import METRICS, summary, window_values


def chart_params(request):
    serializer = ChartParamsSerializer(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


QUERY = {**FREE_OBJECT, "description": "The parameters as understood: start, end, step, range and filters."}


class DashboardView(APIView):
    """The series a dashboard page draws, as JSON."""

    @extend_schema(
        operation_id="metrics_dashboard",
        summary="A dashboard's series",
        parameters=[OpenApiParameter("name", OpenApiTypes.STR, OpenApiParameter.PATH, enum=list(DASHBOARDS)),
                    ChartParamsSerializer],
        responses={200: obj({"query": QUERY}, additionalProperties=True)},
        tags=["metrics"],
    )
    def get(self, request, name):
        if name not in DASHBOARDS:
            raise Http404
        return Response(DASHBOARDS[name](request.user.project, chart_params(request)))


class ValuesView(APIView):
    """The alert metrics over one window: ?start&end (or ?range) and filters;
    ?metrics=a,b narrows the answer."""

    @extend_schema(
        operation_id="metrics_values",
        summary="The alert metrics over one window",
        parameters=[ChartParamsSerializer,
                    OpenApiParameter("metrics", OpenApiTypes.STR, description=f"Comma-separated subset of: {', '.join(METRICS)}.")],
        responses={200: obj({"query": QUERY, "values": {"type": "object", "additionalProperties": nullable(NUMBER)}})},
        tags=["metrics"],
    )
    def get(self, request):
        params = chart_params(request)
        try:
            wanted = check_metrics([m for m in request.query_params.get("metrics", "").split(",") if m] or METRICS)
        except ValueError as error:
            raise ApiError(f"metrics: {error}", fields={"metrics": str(error)}) from None
        values = window_values(request.user.project, params.start, params.end, params.filters, wanted)
        return Response({"query": params.query(), "values": values})


class OptionsView(APIView):
    """The values the filters offer: every agent, step, source type, round and metric name used."""

    @extend_schema(operation_id="metrics_options", summary="Filter values in use",
                   responses={200: {"type": "object", "additionalProperties": array({"oneOf": [STRING, NUMBER]})}},
                   tags=["metrics"])
    def get(self, request):
        return Response(filter_options(request.user.project))


SUMMARY = obj({"metric": STRING, "count": INTEGER,
               **{name: nullable(NUMBER) for name in ("mean", "std", "min", "max", "p50", "p95", "p99")}})


class SummaryView(APIView):
    """One value's distribution over [start, end): count, mean, std (population), min, max
    exact; p50, p95, p99 by nearest rank within 1% (0.001 on [0, 1])."""

    @extend_schema(operation_id="metrics_summary", summary="One value's distribution",
                   parameters=[SummaryParamsSerializer], responses={200: SUMMARY}, tags=["metrics"])
    def get(self, request):
        serializer = SummaryParamsSerializer(data=request.query_params)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        return Response(summary(request.user.project, data["metric"], data["start"], data["end"], data["filters"]))
