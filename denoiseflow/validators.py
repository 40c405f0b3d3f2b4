"""Checks an output must pass before it is trusted without a vote.

A validator is any callable taking the output, a predicate: it passes by
returning something true (`True`, a parsed model) and fails by returning
something false (`False`, `None`, an empty match), `(False, "reason")`, or by
raising (best: `Invalid` with a reason). A validator that says nothing fails:
an unchecked output must never skip the vote. The helpers
here build the usual ones — a JSON-schema-like shape, enum membership, a
numeric range — and name what failed, so the recorder can say why the
expensive path ran.

    validate = df.schema({"type": "object", "required": ["intent"],
                          "properties": {"intent": {"enum": ["refund", "billing"]},
                                         "amount": {"type": "number", "minimum": 0}}})
"""

import json
import re
from collections.abc import Callable, Iterable

TYPES = {
    "object": dict, "array": (list, tuple), "string": str, "boolean": bool, "null": type(None),
    "number": (int, float), "integer": int,
}


class Invalid(ValueError):
    """An output that failed a validator; the message says where and why."""


def outcome(validate: Callable, output) -> str | None:
    """None when `output` passes `validate`, else the reason it failed."""
    try:
        verdict = validate(output)
    except Exception as error:  # a validator that breaks on odd output is a failed validation
        return str(error) or type(error).__name__
    if isinstance(verdict, tuple) and len(verdict) == 2 and isinstance(verdict[0], bool):
        return None if verdict[0] else str(verdict[1] or "validator returned False")
    return None if verdict else f"validator returned {verdict!r}"[:200]


def parsed(output):
    """LLM output is often JSON text: checks apply to what it holds."""
    if isinstance(output, str) and output.strip()[:1] in ("{", "["):
        try:
            return json.loads(output)
        except ValueError:
            raise Invalid("output is not valid JSON") from None
    return output


def is_type(value, name: str) -> bool:
    if name in ("number", "integer") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, TYPES[name])


def check(value, spec: dict, where: str) -> None:
    kinds = spec.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else list(kinds)
        if not any(is_type(value, kind) for kind in kinds):
            raise Invalid(f"{where}: expected {' or '.join(kinds)}, got {type(value).__name__}")
    if "enum" in spec and value not in spec["enum"]:
        raise Invalid(f"{where}: {value!r} is not one of {list(spec['enum'])!r}")
    if "const" in spec and value != spec["const"]:
        raise Invalid(f"{where}: must be {spec['const']!r}")
    if is_type(value, "number"):
        check_range(value, spec.get("minimum"), spec.get("maximum"), where)
        if "exclusiveMinimum" in spec and not value > spec["exclusiveMinimum"]:
            raise Invalid(f"{where}: {value} is not above {spec['exclusiveMinimum']}")
        if "exclusiveMaximum" in spec and not value < spec["exclusiveMaximum"]:
            raise Invalid(f"{where}: {value} is not below {spec['exclusiveMaximum']}")
    if isinstance(value, str):
        if len(value) < spec.get("minLength", 0):
            raise Invalid(f"{where}: shorter than {spec['minLength']} characters")
        if "maxLength" in spec and len(value) > spec["maxLength"]:
            raise Invalid(f"{where}: longer than {spec['maxLength']} characters")
        if "pattern" in spec and not re.search(spec["pattern"], value):
            raise Invalid(f"{where}: does not match {spec['pattern']!r}")
    if isinstance(value, dict):
        for name in spec.get("required", ()):
            if name not in value:
                raise Invalid(f"{where}.{name}: is required")
        properties = spec.get("properties", {})
        for name, item in value.items():
            if name in properties:
                check(item, properties[name], f"{where}.{name}")
            elif spec.get("additionalProperties") is False:
                raise Invalid(f"{where}.{name}: is not allowed")
    if isinstance(value, (list, tuple)):
        if len(value) < spec.get("minItems", 0):
            raise Invalid(f"{where}: fewer than {spec['minItems']} items")
        if "maxItems" in spec and len(value) > spec["maxItems"]:
            raise Invalid(f"{where}: more than {spec['maxItems']} items")
        if "items" in spec:
            for index, item in enumerate(value):
                check(item, spec["items"], f"{where}[{index}]")


def check_range(value, low, high, where: str) -> None:
    if low is not None and value < low:
        raise Invalid(f"{where}: {value} is below the minimum {low}")
    if high is not None and value > high:
        raise Invalid(f"{where}: {value} is above the maximum {high}")


def schema(spec: dict) -> Callable:
    """A validator for a JSON-schema-like `spec`: type, enum, const, required,
    properties, additionalProperties, items, min/maxItems, min/maxLength,
    pattern, minimum/maximum, exclusiveMinimum/Maximum. JSON text is parsed first."""

    def validate(output) -> bool:
        check(parsed(output), spec, "output")
        return True

    return validate


def one_of(values: Iterable) -> Callable:
    """Enum membership; text compares case- and whitespace-insensitively."""
    allowed = list(values)
    folded = {" ".join(v.split()).casefold() for v in allowed if isinstance(v, str)}

    def validate(output) -> bool:
        if isinstance(output, str) and " ".join(output.split()).casefold() in folded:
            return True
        if not isinstance(output, str) and output in allowed:
            return True
        raise Invalid(f"output: {str(output)[:80]!r} is not one of {allowed!r}")

    return validate


def in_range(low: float | None = None, high: float | None = None) -> Callable:
    """A number (or numeric text) within [low, high]."""

    def validate(output) -> bool:
        value = output
        if isinstance(value, str):
            try:
                value = float(value.strip())
            except ValueError:
                raise Invalid(f"output: {value[:80]!r} is not a number") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise Invalid(f"output: {value!r} is not a number")
        check_range(value, low, high, "output")
        return True

    return validate


def all_of(*validators: Callable) -> Callable:
    """Passes when every validator passes; the first failure is the reason."""

    def validate(output) -> bool:
        for validator in validators:
            reason = outcome(validator, output)
            if reason is not None:
                raise Invalid(reason)
        return True

    return validate
