"""`/api/v1/alert-rules`, `/api/v1/alerts`, `/api/v1/destinations`: validate, call the domain modules (alerts.alert_rules, alerts.shared_destinations), answer (alerts.api_json)."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from alerts import alert_rules, api_json, api_shapes, shared_destinations, silences
from alerts.models import AlertEvent, AlertRule, SharedDestination, Silence, destinations_of, uses_of
from alerts.serializers import AlertRuleSerializer, SharedDestinationSerializer, SilenceSerializer
from core.errors import invalid_body
from core.openapi import array


class AlertJSONRenderer(JSONRenderer):
    # An infinite relative change is written as the `Infinity` token (see alerts/conditions.py).
    strict = False


def invalid(errors) -> Response:
    return Response(invalid_body(errors), status=status.HTTP_400_BAD_REQUEST)


class AlertApiView(APIView):
    renderer_classes = [AlertJSONRenderer, BrowsableAPIRenderer]

    def rule_or_404(self, rule_id) -> AlertRule:
        return get_object_or_404(
            AlertRule.objects.select_related("project").prefetch_related(destinations_of(self.request.user.project)),
            project=self.request.user.project, pk=rule_id,
        )


class RuleListView(AlertApiView):
    @extend_schema(operation_id="alert_rules_list", summary="List alert rules",
                   responses={200: array(api_shapes.RULE)}, tags=["alerts"])
    def get(self, request):
        found = (AlertRule.objects.filter(project=request.user.project).select_related("project")
                 .prefetch_related(destinations_of(request.user.project)).order_by("pk"))
        return Response([api_json.rule_json(rule) for rule in found])

    @extend_schema(operation_id="alert_rules_create", summary="Create an alert rule", request=AlertRuleSerializer,
                   responses={201: api_shapes.RULE}, tags=["alerts"])
    def post(self, request):
        serializer = AlertRuleSerializer(data=request.data, context={"project": request.user.project})
        if not serializer.is_valid():
            return invalid(serializer.errors)
        rule = alert_rules.create_rule(request.user.project, serializer.validated_data, request.user)
        return Response(api_json.rule_json(self.rule_or_404(rule.pk)), status=status.HTTP_201_CREATED)


class RuleDetailView(AlertApiView):
    @extend_schema(operation_id="alert_rules_retrieve", summary="One alert rule",
                   responses={200: api_shapes.RULE}, tags=["alerts"])
    def get(self, request, rule_id):
        return Response(api_json.rule_json(self.rule_or_404(rule_id)))

    @extend_schema(operation_id="alert_rules_update", summary="Change an alert rule",
                   description="Fields given replace the rule's; `conditions` and `destinations` as a whole.",
                   request=AlertRuleSerializer(partial=True), responses={200: api_shapes.RULE}, tags=["alerts"])
    def patch(self, request, rule_id):
        rule = self.rule_or_404(rule_id)
        serializer = AlertRuleSerializer(data=request.data, partial=True, context={"project": request.user.project})
        if not serializer.is_valid():
            return invalid(serializer.errors)
        alert_rules.update_rule(rule, serializer.validated_data, request.user)
        return Response(api_json.rule_json(self.rule_or_404(rule.pk)))

    @extend_schema(operation_id="alert_rules_destroy", summary="Delete an alert rule",
                   responses={204: OpenApiResponse(description="Deleted.")}, tags=["alerts"])
    def delete(self, request, rule_id):
        alert_rules.delete_rule(self.rule_or_404(rule_id), request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class AlertQuerySerializer(serializers.Serializer):
    rule_id = serializers.IntegerField(required=False, min_value=1)
    state = serializers.ChoiceField(choices=["firing", "resolved"], required=False)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=1000, default=100)


class AlertListView(AlertApiView):
    """Alert events, newest first (a plain list; `limit` caps it, default 100)."""

    @extend_schema(operation_id="alerts_list", summary="Alert events, newest first", parameters=[AlertQuerySerializer],
                   responses={200: array(api_shapes.ALERT_EVENT)}, tags=["alerts"])
    def get(self, request):
        query = AlertQuerySerializer(data=request.query_params)
        if not query.is_valid():
            return invalid(query.errors)
        params = query.validated_data
        events = AlertEvent.objects.filter(project=request.user.project)
        if "rule_id" in params:
            events = events.filter(rule_id=params["rule_id"])
        if "state" in params:
            events = events.filter(state=params["state"])
        return Response([api_json.event_json(e) for e in events.order_by("-at", "-pk")[: params["limit"]]])


class SharedDestinationListView(AlertApiView):
    """Project-wide destinations a rule picks with `{"type": "shared", "name": ...}`."""

    @extend_schema(operation_id="destinations_list", summary="List project-wide destinations",
                   responses={200: array(api_shapes.SHARED_DESTINATION)}, tags=["alerts"])
    def get(self, request):
        found = SharedDestination.objects.filter(project=request.user.project).prefetch_related(
            uses_of(request.user.project))
        return Response([shared_destinations.as_json(d) for d in found])

    @extend_schema(operation_id="destinations_create", summary="Create a project-wide destination",
                   request={"application/json": api_shapes.SHARED_DESTINATION_INPUT}, responses={201: api_shapes.SHARED_DESTINATION},
                   tags=["alerts"])
    def post(self, request):
        serializer = SharedDestinationSerializer(data=request.data, project=request.user.project)
        if not serializer.is_valid():
            return invalid(serializer.errors)
        created = shared_destinations.create(request.user.project, serializer.validated_data, request.user)
        return Response(shared_destinations.as_json(created), status=status.HTTP_201_CREATED)


class SharedDestinationDetailView(AlertApiView):
    def destination_or_404(self, destination_id) -> SharedDestination:
        return get_object_or_404(SharedDestination.objects.prefetch_related(uses_of(self.request.user.project)),
                                 project=self.request.user.project, pk=destination_id)

    @extend_schema(operation_id="destinations_retrieve", summary="One project-wide destination",
                   responses={200: api_shapes.SHARED_DESTINATION}, tags=["alerts"])
    def get(self, request, destination_id):
        return Response(shared_destinations.as_json(self.destination_or_404(destination_id)))

    @extend_schema(operation_id="destinations_update", summary="Replace a project-wide destination",
                   description="The whole destination (name, type and its fields); every rule using it "
                               "sends to the new one.",
                   request={"application/json": api_shapes.SHARED_DESTINATION_INPUT}, responses={200: api_shapes.SHARED_DESTINATION},
                   tags=["alerts"])
    def put(self, request, destination_id):
        found = self.destination_or_404(destination_id)
        serializer = SharedDestinationSerializer(data=request.data, project=request.user.project,
                                                 instance_pk=found.pk)
        if not serializer.is_valid():
            return invalid(serializer.errors)
        shared_destinations.update(found, serializer.validated_data, request.user)
        return Response(shared_destinations.as_json(self.destination_or_404(found.pk)))

    @extend_schema(operation_id="destinations_destroy", summary="Delete a project-wide destination",
                   description="Rules that used it no longer send there.",
                   responses={204: OpenApiResponse(description="Deleted.")}, tags=["alerts"])
    def delete(self, request, destination_id):
        shared_destinations.delete(self.destination_or_404(destination_id), request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class SilenceListView(AlertApiView):
    @extend_schema(operation_id="silences_list", summary="Active silences",
                   responses={200: array(api_shapes.SILENCE)}, tags=["alerts"])
    def get(self, request):
        return Response([silences.as_json(s) for s in silences.active(request.user.project)])

    @extend_schema(operation_id="silences_create", summary="Silence one rule, or every rule of the project",
                   description="While it is active, rules still change state and their alert events are recorded "
                               "with `silenced: true`, but nothing is delivered, then or later.",
                   request={"application/json": api_shapes.SILENCE_INPUT}, responses={201: api_shapes.SILENCE},
                   tags=["alerts"])
    def post(self, request):
        serializer = SilenceSerializer(data=request.data, context={"project": request.user.project})
        if not serializer.is_valid():
            return invalid(serializer.errors)
        created = silences.create(request.user.project, serializer.validated_data, str(request.user), request.user)
        return Response(silences.as_json(created), status=status.HTTP_201_CREATED)


class SilenceDetailView(AlertApiView):
    @extend_schema(operation_id="silences_destroy", summary="End a silence now",
                   responses={204: OpenApiResponse(description="Ended.")}, tags=["alerts"])
    def delete(self, request, silence_id):
        found = get_object_or_404(Silence, project=request.user.project, pk=silence_id, ended_at__isnull=True)
        silences.end(found, str(request.user), request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
