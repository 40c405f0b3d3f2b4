from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.params import TimestampField
from provenance.api import shapes
from provenance.ingest.validation import ENVIRONMENT
from provenance.models import DEFAULT_ENVIRONMENT
from provenance.root_causes import aggregate


class RootCausesQuery(serializers.Serializer):
    start = TimestampField(help_text="Answers whose timestamp is at or after this instant.")
    end = TimestampField(help_text="… and before this one.")
    answers = serializers.ChoiceField(choices=aggregate.ANSWER_KINDS, required=False, default="incorrect",
                                      help_text="Which answers: reviewed incorrect (default), fused, or low confidence.")
    agent_id = serializers.CharField(required=False, default="", help_text="Only answers produced by this agent.")
    environment = serializers.RegexField(rf"^{ENVIRONMENT.pattern}\Z", required=False, default=DEFAULT_ENVIRONMENT,
                                         error_messages={"invalid": "must be 1-50 letters, digits, - or _"},
                                         help_text="Only answers of traces in this environment (default production).")
    model = serializers.CharField(required=False, default="", max_length=255,
                                  help_text="Only answers whose final answer node names this model.")
    policy_version = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=0,
                                              help_text="Only answers whose trace's fuse decisions came from this "
                                                        "policy version.")

    def validate(self, data):
        if data["end"] <= data["start"]:
            raise serializers.ValidationError({"end": "must be after start"})
        return data

    def to_answers(self) -> aggregate.Answers:
        data = self.validated_data
        return aggregate.Answers(data["start"], data["end"], data["answers"], data["agent_id"], data["policy_version"],
                                 data["environment"], data["model"])


class RootCausesView(APIView):
    """`GET /api/v1/root-causes`: why answers go wrong, in aggregate."""

    @extend_schema(operation_id="root_causes", summary="Why answers go wrong, in aggregate",
                   parameters=[RootCausesQuery], responses={200: shapes.ROOT_CAUSES}, tags=["traces"])
    def get(self, request):
        query = RootCausesQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(aggregate.causes(request.user.project, query.to_answers()))
