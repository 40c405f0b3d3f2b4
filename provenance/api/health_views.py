from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from provenance import health
from provenance.api import shapes
from provenance.models import FindingKind


class LatestHealthQuery(serializers.Serializer):
    kind = serializers.ChoiceField(choices=FindingKind.values, required=False)


class LatestHealthView(APIView):
    """`GET /api/v1/health/latest`: the newest report of the key's project.
    Before the first run: `{"checked_at": null, "findings": []}`, so a client
    reads one shape whether or not the check has run yet."""

    @extend_schema(operation_id="health_latest", summary="The newest DAG health report", parameters=[LatestHealthQuery],
                   responses={200: shapes.HEALTH_REPORT}, tags=["health"])
    def get(self, request):
        query = LatestHealthQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        report = health.latest_report(request.user.project)
        if report is None:
            return Response({"checked_at": None, "finding_count": 0, "counts": {}, "findings": []})
        findings = report.findings.order_by("kind", "trace_id", "product_id", "pk")
        if kind := query.validated_data.get("kind"):
            findings = findings.filter(kind=kind)
        return Response(
            {
                "checked_at": report.checked_at,
                "started_at": report.started_at,
                "finished_at": report.finished_at,
                "node_count": report.node_count,
                "finding_count": report.finding_count,
                "counts": report.counts,
                "findings": list(findings.values("kind", "trace_id", "product_id", "detail").iterator()),
            }
        )
