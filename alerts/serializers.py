"""Validation of alert rules as the contract writes them, for the API and the
rule builder alike. Each destination kind validates its own config."""

import math

from django.conf import settings
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
from alerts.transports import TRANSPORTS
from alerts.transports.safe_http import UnsafeDestination, check_url

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
        filters = {key: value for key, value in (data.get("filters") or {}).items() if value}
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


class WebhookDestinationSerializer(StrictSerializer):
    type = serializers.ChoiceField(choices=["webhook"])
    url = serializers.CharField(max_length=2000)
    secret = serializers.CharField(required=False, max_length=200,
                                   help_text="whsec_<base64> or any string; generated when absent.")

    def validate_url(self, value: str) -> str:
        try:
            check_url(value, allow_private=settings.WEBHOOK_ALLOW_PRIVATE)
        except UnsafeDestination as error:
            message = str(error)
            if message.startswith("refused:"):
                message += "; destinations on loopback, private or link-local addresses are refused"
            raise serializers.ValidationError(message) from None
        return value

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


DESTINATION_SERIALIZERS = {"webhook": WebhookDestinationSerializer, "inbox": InboxDestinationSerializer}
assert set(DESTINATION_SERIALIZERS) == set(TRANSPORTS), "every destination kind needs a serializer and a transport"


@extend_schema_field(WebhookDestinationSerializer)
class DestinationField(serializers.Field):
    """Picks the serializer of the destination's `type`."""

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError("must be an object with a type")
        kind = data.get("type")
        if not isinstance(kind, str) or kind not in DESTINATION_SERIALIZERS:
            raise serializers.ValidationError(
                {"type": [f"unknown destination type {kind!r}; known: {', '.join(DESTINATION_SERIALIZERS)}"]}
            )
        serializer = DESTINATION_SERIALIZERS[kind](data=data)
        if not serializer.is_valid():
            raise serializers.ValidationError(serializer.errors)
        return serializer.validated_data

    def to_representation(self, value):
        return value


class AlertRuleSerializer(serializers.Serializer):
    """Input only: output is `alerts.rules.rule_json`."""

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
