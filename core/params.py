"""Query-parameter and form-value parsing shared by the API's serializers
and the pages: one way to read a number or a moment, so that a bad value is
a 400 (or a form error) naming the field, never a 500 nor "everything"."""

from datetime import UTC, datetime

from django.core.exceptions import BadRequest
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.timestamps import parse_instant

# Far enough from datetime's limits that windows and ranges around them stay representable.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9000, 1, 1, tzinfo=UTC)
# The largest id or version a page accepts: PostgreSQL's integer column.
LARGEST_INT = 2**31 - 1


class BadParameter(BadRequest):
    """A page's query or form value it cannot read: a 400 whose page names
    the parameter (core.errors.bad_request)."""

    def __init__(self, name: str, reason: str):
        super().__init__(f"{name}: {reason}")


def whole_number(raw, low: int = 0, high: int = LARGEST_INT) -> int:
    """`raw` as an int from `low` to `high`, or ValueError saying what is
    expected. ASCII digits only: "²" and "٣" pass `str.isdigit` but `int`
    refuses the first, and neither is a number anyone typed on purpose."""
    text = raw if isinstance(raw, str) else ""
    digits = text[1:] if text.startswith("-") and low < 0 else text
    if not (digits.isascii() and digits.isdigit() and len(digits) <= len(str(max(abs(low), high)))) or not (
            low <= int(text) <= high):
        raise ValueError(f"a whole number from {low} to {high}")
    return int(text)


def number_param(params, name: str, low: int = 0, high: int = LARGEST_INT) -> int | None:
    """The whole number in `params[name]` (a QueryDict or dict), None when
    absent or empty, BadParameter naming it when it is not one."""
    raw = params.get(name, "")
    if raw in ("", None):
        return None
    try:
        return whole_number(raw, low, high)
    except ValueError as error:
        raise BadParameter(name, str(error)) from None


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
