"""GET /api/v1/metrics/…: the dashboards' series as JSON, for the API key's project."""

from django.http import Http404
from rest_framework.response import Response
from rest_framework.views import APIView

from metrics.catalog import check_metrics
from metrics.dashboards import DASHBOARDS
from metrics.filter_options import filter_options
from metrics.params import ChartParamsSerializer
from metrics.values import METRICS, window_values


def chart_params(request):
    serializer = ChartParamsSerializer(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class DashboardView(APIView):
    def get(self, request, name):
        if name not in DASHBOARDS:
            raise Http404
        return Response(DASHBOARDS[name](request.user.project, chart_params(request)))


class ValuesView(APIView):
    """The alert metrics over one window: ?start&end (or ?range) and filters;
    ?metrics=a,b narrows the answer."""

    def get(self, request):
        params = chart_params(request)
        try:
            wanted = check_metrics([m for m in request.query_params.get("metrics", "").split(",") if m] or METRICS)
        except ValueError as error:
            return Response({"error": "invalid request", "fields": {"metrics": [str(error)]}}, status=400)
        values = window_values(request.user.project, params.start, params.end, params.filters, wanted)
        return Response({"query": params.query(), "values": values})


class OptionsView(APIView):
    def get(self, request):
        return Response(filter_options(request.user.project))
