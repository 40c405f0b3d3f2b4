"""Validation of alert rules as the contract writes them, for the API and the
rule builder alike. Each destination kind validates its own config."""

import math

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from alerts import signing
from alerts.conditions import (
    DATASET_FILTER,
    EVAL_ACCURACY,
    FILTER_KEYS,
    MATCHES,
    MAX_WINDOW_SECONDS,
    OPS,
    RULE_FILTER_KEYS,
    RULE_METRICS,
    parse_duration,
)
from alerts.models import AlertRule, SharedDestination
from alerts.transports import TRANSPORTS
from alerts.transports.safe_http import UnsafeDestination, check_name, check_url
from core.params import TimestampField

MAX_CONDITIONS = 20
MAX_DESTINATIONS = 10


class StrictSerializer(serializers.Serializer):
    """Refuses keys it does not know: a misspelt filter must not silently widen a rule."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {key: [f"unknown field; expected one of: {', '.join(self.fields)}"] for key in unknown}
                )
        return super().to_internal_value(data)


class FiltersSerializer(StrictSerializer):
    agent_id = serializers.CharField(required=False, allow_blank=True, max_length=255)
    step = serializers.CharField(required=False, allow_blank=True, max_length=255)
    source_type = serializers.CharField(required=False, allow_blank=True, max_length=64)
    round = serializers.IntegerField(required=False, allow_null=True, min_value=0, max_value=2**31 - 1,
                                     help_text="One backflow round: only nodes of this round count.")
    model = serializers.CharField(required=False, allow_blank=True, max_length=255)
    environment = serializers.RegexField(r"^[A-Za-z0-9_-]{1,50}$", required=False, allow_blank=True,
                                         error_messages={"invalid": "an environment is 1-50 letters, digits, - or _"},
                                         help_text="The traces' environment (default production).")
    dataset = serializers.CharField(required=False, allow_blank=True, max_length=100,
                                    help_text="eval_accuracy only: the truth set whose runs are read.")


class ConditionSerializer(StrictSerializer):
    metric = serializers.ChoiceField(choices=RULE_METRICS)
    window = serializers.CharField(max_length=16, required=False)
    change = serializers.ChoiceField(choices=["relative"], required=False, allow_null=True, allow_blank=True)
    filters = FiltersSerializer(required=False, allow_null=True)
    op = serializers.ChoiceField(choices=list(OPS))
    threshold = serializers.FloatField()

    def validate_window(self, value: str) -> str:
        seconds = validate_duration(value)
        if seconds <= 0:
            raise serializers.ValidationError("must be longer than 0s")
        if seconds > MAX_WINDOW_SECONDS:
            raise serializers.ValidationError("must be at most 31d")
        return value.strip()

    def validate_threshold(self, value: float) -> float:
        if not math.isfinite(value):
            raise serializers.ValidationError("must be a finite number")
        return value

    def validate(self, data: dict) -> dict:
        """The stored form: only what is set, in the contract's spelling."""
        # A PATCH replaces conditions whole: each needs every required field even
        # though DRF skips missing fields throughout a partial update.
        missing = [name for name, field in self.fields.items() if field.required and name not in data]
        if missing:
            raise serializers.ValidationError({name: "This field is required." for name in missing})
        filters = {key: value for key, value in (data.get("filters") or {}).items() if value not in (None, "")}
        check_metric_filters(data["metric"], filters)
        if "window" not in data and data["metric"] != EVAL_ACCURACY:
            raise serializers.ValidationError({"window": ["This field is required."]})
        condition = {"metric": data["metric"]}
        if "window" in data:
            condition["window"] = data["window"]
        if data.get("change"):
            condition["change"] = data["change"]
        if filters:
            condition["filters"] = {key: filters[key] for key in RULE_FILTER_KEYS if key in filters}
        condition["op"] = data["op"]
        condition["threshold"] = data["threshold"]
        return condition


def check_metric_filters(metric: str, filters: dict) -> None:
    """eval_accuracy reads one dataset's runs, not nodes: it needs `filters.dataset`
    and takes no node filter; the node metrics take no dataset."""
    if metric == EVAL_ACCURACY:
        if not filters.get(DATASET_FILTER):
            raise serializers.ValidationError({"filters": {DATASET_FILTER: [
                "required for eval_accuracy: the truth set whose newest finished run is read"]}})
        node_filters = [key for key in FILTER_KEYS if key in filters]
        if node_filters:
            raise serializers.ValidationError({"filters": {node_filters[0]: [
                "eval_accuracy reads evaluation runs, not nodes: only filters.dataset applies"]}})
    elif filters.get(DATASET_FILTER):
        raise serializers.ValidationError({"filters": {DATASET_FILTER: [
            f"only eval_accuracy reads a dataset; {metric} is over nodes"]}})


def validate_duration(value: str) -> int:
    try:
        return parse_duration(value)
    except ValueError as error:
        raise serializers.ValidationError(str(error)) from None


# Said wherever a destination on this machine is refused: how to reach one anyway.
LOCAL_RECEIVER_HINT = ("to try a rule with a receiver on this machine, use the built-in webhook inbox "
                       "(destination type inbox; the server needs WEBHOOK_INBOX=1) or start the server with "
                       "WEBHOOK_ALLOW_PRIVATE=1")


def guarded_url(value: str) -> str:
    """A URL a user typed: refused when it names, or its host name resolves to,
    a loopback, private or link-local address."""
    try:
        target = check_url(value, allow_private=settings.WEBHOOK_ALLOW_PRIVATE)
        if not settings.WEBHOOK_ALLOW_PRIVATE:
            check_name(target)
    except UnsafeDestination as error:
        message = str(error)
        if message.startswith("refused:"):
            message += f"; destinations on loopback, private or link-local addresses are refused; {LOCAL_RECEIVER_HINT}"
        raise serializers.ValidationError(message) from None
    return value


class WebhookDestinationSerializer(StrictSerializer):
    type = serializers.ChoiceField(choices=["webhook"])
    url = serializers.CharField(max_length=2000)
    secret = serializers.CharField(required=False, max_length=200,
                                   help_text="whsec_<base64> or any string; generated when absent.")

    def validate_url(self, value: str) -> str:
        return guarded_url(value)

    def validate_secret(self, value: str) -> str:
        if not signing.is_valid_secret(value):
            raise serializers.ValidationError("a whsec_ secret must be base64 after the prefix")
        return value

    def validate(self, data: dict) -> dict:
        return {"type": "webhook", "url": data["url"], "secret": data.get("secret") or signing.new_secret()}


class InboxDestinationSerializer(StrictSerializer):
    """The built-in webhook inbox (alerts.transports.inbox), when WEBHOOK_INBOX is on."""

    type = serializers.ChoiceField(choices=["inbox"])
    secret = serializers.CharField(required=False, max_length=200)

    def validate(self, data: dict) -> dict:
        if not settings.WEBHOOK_INBOX:
            raise serializers.ValidationError("the webhook inbox is off on this server (WEBHOOK_INBOX=1 turns it on)")
        secret = data.get("secret") or signing.new_secret()
        if not signing.is_valid_secret(secret):
            raise serializers.ValidationError({"secret": ["a whsec_ secret must be base64 after the prefix"]})
        return {"type": "inbox", "secret": secret}


class SlackDestinationSerializer(StrictSerializer):
    type = serializers.ChoiceField(choices=["slack"])
    url = serializers.CharField(max_length=2000, help_text="A Slack incoming-webhook URL.")

    def validate_url(self, value: str) -> str:
        return guarded_url(value)

    def validate(self, data: dict) -> dict:
        return {"type": "slack", "url": data["url"]}


class EmailDestinationSerializer(StrictSerializer):
    type = serializers.ChoiceField(choices=["email"])
    to = serializers.ListField(child=serializers.EmailField(max_length=254), allow_empty=False, max_length=20)

    def validate(self, data: dict) -> dict:
        return {"type": "email", "to": list(dict.fromkeys(address.strip() for address in data["to"]))}


class PagerDutyDestinationSerializer(StrictSerializer):
    type = serializers.ChoiceField(choices=["pagerduty"])
    routing_key = serializers.RegexField(r"^\S+$", max_length=64,
                                         error_messages={"invalid": "must be the integration's routing key, "
                                                                    "without spaces"},
                                         help_text="The Events API v2 integration key of a PagerDuty service.")

    def validate(self, data: dict) -> dict:
        return {"type": "pagerduty", "routing_key": data["routing_key"]}


class SharedDestinationRefSerializer(StrictSerializer):
    """A project-wide destination, picked by its name."""

    type = serializers.ChoiceField(choices=["shared"])
    name = serializers.CharField(max_length=100)

    def validate_name(self, value: str) -> str:
        project = self.context.get("project")
        found = SharedDestination.objects.filter(project=project, name=value).values_list("pk", flat=True).first()
        if project is None or found is None:
            raise serializers.ValidationError(f"no project destination is named {value!r}")
        self.shared_id = found
        return value

    def validate(self, data: dict) -> dict:
        return {"type": "shared", "name": data["name"], "shared_id": self.shared_id}


DESTINATION_SERIALIZERS = {"webhook": WebhookDestinationSerializer, "inbox": InboxDestinationSerializer,
                           "slack": SlackDestinationSerializer, "email": EmailDestinationSerializer,
                           "pagerduty": PagerDutyDestinationSerializer}
assert set(DESTINATION_SERIALIZERS) == set(TRANSPORTS), "every destination kind needs a serializer and a transport"
RULE_DESTINATION_SERIALIZERS = {**DESTINATION_SERIALIZERS, "shared": SharedDestinationRefSerializer}


def validated_destination(data, choices: dict, context: dict) -> dict:
    if not isinstance(data, dict):
        raise serializers.ValidationError("must be an object with a type")
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in choices:
        raise serializers.ValidationError(
            {"type": [f"unknown destination type {kind!r}; known: {', '.join(choices)}"]}
        )
    serializer = choices[kind](data=data, context=context)
    if not serializer.is_valid():
        raise serializers.ValidationError(serializer.errors)
    return serializer.validated_data


@extend_schema_field(WebhookDestinationSerializer)
class DestinationField(serializers.Field):
    """Picks the serializer of the destination's `type`."""

    def to_internal_value(self, data):
        return validated_destination(data, RULE_DESTINATION_SERIALIZERS, self.context)

    def to_representation(self, value):
        return value


class SharedDestinationSerializer(serializers.Serializer):
    """A project-wide destination: a name and one destination of any kind, written
    flat (`{"name": "on-call", "type": "slack", "url": ...}`)."""

    def __init__(self, *args, project=None, instance_pk=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.project, self.instance_pk = project, instance_pk

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError({"body": ["must be an object with a name and a type"]})
        errors, name = {}, data.get("name")
        if not isinstance(name, str) or not name.strip() or len(name) > 100:
            errors["name"] = ["a name of 1-100 characters is required"]
        elif (SharedDestination.objects.filter(project=self.project, name=name.strip())
              .exclude(pk=self.instance_pk).exists()):
            errors["name"] = [f"the project already has a destination named {name.strip()!r}"]
        try:
            destination = validated_destination({k: v for k, v in data.items() if k != "name"},
                                                DESTINATION_SERIALIZERS, {"project": self.project})
        except serializers.ValidationError as error:
            errors.update(error.detail if isinstance(error.detail, dict) else {"type": error.detail})
        if errors:
            raise serializers.ValidationError(errors)
        return {"name": name.strip(), **destination}


class AlertRuleSerializer(serializers.Serializer):
    """Input only: output is `alerts.api_json.rule_json`."""

    name = serializers.CharField(max_length=200)
    match = serializers.ChoiceField(choices=list(MATCHES), default="all")
    conditions = ConditionSerializer(many=True, allow_empty=False, min_length=1, max_length=MAX_CONDITIONS)
    destinations = serializers.ListField(child=DestinationField(), default=list, max_length=MAX_DESTINATIONS)
    enabled = serializers.BooleanField(default=True)
    muted_until = serializers.DateTimeField(required=False, allow_null=True)

    def get_fields(self):
        fields = super().get_fields()
        # `for` is a Python keyword, so it cannot be declared as a class attribute.
        fields["for"] = serializers.CharField(max_length=16, default="0m")
        return fields

    def validate_for(self, value: str) -> str:
        if validate_duration(value) > MAX_WINDOW_SECONDS:
            raise serializers.ValidationError("must be at most 31d")
        return value.strip()


class SilenceSerializer(StrictSerializer):
    """`{"rule_id"?: int, "until": ISO8601, "reason": str}`; no rule_id: every rule of the project."""

    rule_id = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    until = TimestampField()
    reason = serializers.CharField(max_length=500)

    def validate_rule_id(self, value):
        if value is not None and not AlertRule.objects.filter(project=self.context["project"], pk=value).exists():
            raise serializers.ValidationError("no alert rule of this project has this id")
        return value

    def validate_until(self, value):
        if value <= timezone.now():
            raise serializers.ValidationError("must be in the future")
        if value.year >= 2200:
            raise serializers.ValidationError("must be before 2200")
        return value
