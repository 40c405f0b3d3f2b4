from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from provenance import health
from provenance.api import shapes
from provenance.models import FindingKind


class LatestHealthQuery(serializers.Serializer):
    kind = serializers.ChoiceField(choices=FindingKind.values, required=False)
    agent_id = serializers.CharField(required=False, allow_blank=True, max_length=255,
                                     help_text="Only findings on this agent's nodes.")
    step = serializers.CharField(required=False, allow_blank=True, max_length=255,
                                 help_text="Only findings on nodes of this step.")
    offset = serializers.IntegerField(required=False, min_value=0, default=0, max_value=10**9)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=10_000,
                                     help_text="At most this many findings (default: all).")


class LatestHealthView(APIView):
    """`GET /api/v1/health/latest`: the newest report of the key's project.
    Before the first run: `{"checked_at": null, "findings": []}`, so a client
    reads one shape whether or not the check has run yet. `findings` lists
    every finding unless `limit` pages them; `groups` counts them by kind and
    by (agent, step)."""

    @extend_schema(operation_id="health_latest", summary="The newest DAG health report", parameters=[LatestHealthQuery],
                   responses={200: shapes.HEALTH_REPORT}, tags=["health"])
    def get(self, request):
        query = LatestHealthQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        report = health.latest_report(request.user.project)
        if report is None:
            return Response({"checked_at": None, "finding_count": 0, "counts": {}, "findings": []})
        wanted = query.validated_data
        findings, matching = health.findings_page(
            report, kind=wanted.get("kind"), agent_id=wanted.get("agent_id"), step=wanted.get("step"),
            offset=wanted["offset"], limit=wanted.get("limit"))
        return Response(
            {
                "checked_at": report.checked_at,
                "started_at": report.started_at,
                "finished_at": report.finished_at,
                "node_count": report.node_count,
                "finding_count": report.finding_count,
                "counts": report.counts,
                "findings": findings,
                "matching": matching,
                "groups": health.finding_groups(report),
            }
        )
