"""Query-parameter parsing shared by the API's serializers."""

from datetime import UTC, datetime

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.timestamps import parse_instant

# Far enough from datetime's limits that windows and ranges around them stay representable.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9000, 1, 1, tzinfo=UTC)


def timestamp_param(value: str) -> datetime:
    """An ISO 8601 query parameter, or a validation error that says why not."""
    try:
        parsed = parse_instant(value)
    except ValueError as error:
        raise serializers.ValidationError(str(error)) from None
    if not EARLIEST <= parsed < LATEST:
        raise serializers.ValidationError(f"must be between {EARLIEST.year} and {LATEST.year}")
    return parsed


@extend_schema_field(OpenApiTypes.DATETIME)
class TimestampField(serializers.CharField):
    """An ISO 8601 instant (UTC when it has no offset), as a timezone-aware datetime."""

    def to_internal_value(self, data) -> datetime:
        return timestamp_param(super().to_internal_value(data))
