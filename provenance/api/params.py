"""Query-parameter parsing shared by the API's serializers."""

from datetime import datetime

from rest_framework import serializers

from provenance.validation import EventError, parse_timestamp


def timestamp_param(value: str) -> datetime:
    """An ISO 8601 query parameter, or a validation error that says why not."""
    try:
        return parse_timestamp(value)
    except EventError as error:
        raise serializers.ValidationError(error.message.removeprefix("timestamp: ")) from None
