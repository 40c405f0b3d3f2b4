"""What a well-formed dataset name, item, result and recheck value is.

Each check raises `Invalid` naming the field by its dotted path with index
(`items[3].expected`), so the API answers a 400 that says exactly what to fix.
"""

import math
import re

from core.errors import ApiError
from core.field_checks import number_problem
from core.numbers import is_finite_number
from evals.judge import KINDS, TOLERANCE_KEYS, default_kind

NAME = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
MAX_BATCH = 1000
MAX_ID_LENGTH = 255
MAX_TAGS = 50
MAX_TAG_LENGTH = 100
MAX_TEXT = 2000
ORIGINS = ("production", "synthetic")
ITEM_FIELDS = ("id", "input", "expected", "kind", "tags", "origin", "tolerance")
RESULT_FIELDS = ("item_id", "actual", "trace_id", "product_id", "latency_ms", "escalated", "error")


class Invalid(ApiError):
    """One field at fault (raise-first: the first problem found is the answer)."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}", fields={field: message})
        self.field = field


def dataset_name(value, field: str = "name") -> str:
    if not isinstance(value, str) or not NAME.match(value):
        raise Invalid(field, "must be 1–100 characters of letters, digits, '-', '_' and '.'")
    if set(value) == {"."}:
        raise Invalid(field, "must not be only dots (it would read as a path)")
    return value


def no_nul(value: str, field: str) -> str:
    if "\x00" in value:
        raise Invalid(field, "must not contain NUL (\\u0000) characters")
    return value


def text(value, field: str, max_length: int = MAX_TEXT, *, required: bool = False) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise Invalid(field, "must be a string")
    no_nul(value, field)
    if required and not value.strip():
        raise Invalid(field, "must not be empty")
    if len(value) > max_length:
        raise Invalid(field, f"must be at most {max_length} characters")
    return value


def batch(data, key: str, max_length: int = MAX_BATCH) -> list:
    if not isinstance(data, dict):
        raise Invalid(key, f'the body must be a JSON object {{"{key}": [...]}}')
    values = data.get(key)
    if not isinstance(values, list):
        raise Invalid(key, "required: a list")
    if len(values) > max_length:
        raise Invalid(key, f"at most {max_length:,} per call, got {len(values):,}")
    return values


def finite_json(value, field: str):
    """JSON values the database can keep: NaN and infinities have no JSON
    spelling, and PostgreSQL text and jsonb hold no NUL character."""
    if isinstance(value, float) and not math.isfinite(value):
        raise Invalid(field, "must be a finite number")
    if isinstance(value, str):
        no_nul(value, field)
    if isinstance(value, dict):
        for key, inner in value.items():
            no_nul(key, field)
            finite_json(inner, f"{field}.{key}")
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            finite_json(inner, f"{field}[{index}]")
    return value


def expected_value(kind: str, value, field: str):
    if kind == "number" and not is_finite_number(value):
        raise Invalid(field, "must be a number for kind number")
    if kind == "percentages":
        if not isinstance(value, dict) or not value:
            raise Invalid(field, "must be a non-empty object of name → percentage for kind percentages")
        for name, share in value.items():
            if problem := number_problem(share, 0, 100, not_a_number="must be a number (a percentage, 0–100)",
                                         below="must be a percentage between 0 and 100"):
                raise Invalid(f"{field}.{name}", problem)
    if kind == "label" and not isinstance(value, str):
        raise Invalid(field, "must be a string for kind label")
    return finite_json(value, field)


def tolerance_value(kind: str, value, field: str) -> dict | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise Invalid(field, "must be an object")
    allowed = TOLERANCE_KEYS[kind]
    for key, number in value.items():
        if key not in allowed:
            expected = f"one of {', '.join(allowed)}" if allowed else "no tolerance"
            raise Invalid(f"{field}.{key}", f"unknown for kind {kind}; it takes {expected}")
        if problem := number_problem(number, 0, float("inf"), below="must not be negative"):
            raise Invalid(f"{field}.{key}", problem)
    return dict(value) or None


def item(data, field: str) -> dict:
    """The stored form of an ITEM: every field present, defaults applied."""
    if not isinstance(data, dict):
        raise Invalid(field, "must be an object")
    unknown = sorted(set(data) - set(ITEM_FIELDS) - {"drifted"})
    if unknown:
        raise Invalid(f"{field}.{unknown[0]}", f"unknown field; expected one of: {', '.join(ITEM_FIELDS)}")
    item_id = data.get("id")
    if not isinstance(item_id, str) or not item_id.strip():
        raise Invalid(f"{field}.id", "required: a non-empty string")
    if len(item_id) > MAX_ID_LENGTH:
        raise Invalid(f"{field}.id", f"must be at most {MAX_ID_LENGTH} characters")
    no_nul(item_id, f"{field}.id")
    if "expected" not in data:
        raise Invalid(f"{field}.expected", "required")
    expected = data["expected"]
    kind = data.get("kind")
    if kind is None:
        kind = default_kind(expected)
    elif kind not in KINDS:
        raise Invalid(f"{field}.kind", f"must be one of {', '.join(KINDS)}")
    tags = data.get("tags")
    if tags is None:
        tags = []
    if not isinstance(tags, list) or not all(isinstance(t, str) and t.strip() for t in tags):
        raise Invalid(f"{field}.tags", "must be a list of non-empty strings")
    if len(tags) > MAX_TAGS or any(len(t) > MAX_TAG_LENGTH for t in tags):
        raise Invalid(f"{field}.tags", f"at most {MAX_TAGS} tags of at most {MAX_TAG_LENGTH} characters")
    for tag in tags:
        no_nul(tag, f"{field}.tags")
    origin = data.get("origin")
    if origin is None:
        origin = "synthetic"
    if origin not in ORIGINS:
        raise Invalid(f"{field}.origin", f"must be one of {', '.join(ORIGINS)}")
    return {
        "id": item_id,
        "input": finite_json(data.get("input"), f"{field}.input"),
        "expected": expected_value(kind, expected, f"{field}.expected"),
        "kind": kind,
        # Order kept as given, duplicates dropped: tags are a set a person wrote in order.
        "tags": list(dict.fromkeys(t.strip() for t in tags)),
        "origin": origin,
        "tolerance": tolerance_value(kind, data.get("tolerance"), f"{field}.tolerance"),
    }


def items(values: list, field: str = "items") -> list[dict]:
    """Every item checked before any is stored; a repeated id keeps its last form."""
    checked = {}
    for index, value in enumerate(values):
        parsed = item(value, f"{field}[{index}]")
        checked.pop(parsed["id"], None)
        checked[parsed["id"]] = parsed
    return list(checked.values())


def result(data, field: str) -> dict:
    """A RESULT's stored form; raises Invalid for that entry alone."""
    if not isinstance(data, dict):
        raise Invalid(field, "must be an object")
    unknown = sorted(set(data) - set(RESULT_FIELDS))
    if unknown:
        raise Invalid(f"{field}.{unknown[0]}", f"unknown field; expected one of: {', '.join(RESULT_FIELDS)}")
    item_id = data.get("item_id")
    if not isinstance(item_id, str) or not item_id:
        raise Invalid(f"{field}.item_id", "required: a non-empty string")
    no_nul(item_id, f"{field}.item_id")
    latency = data.get("latency_ms")
    if latency is not None and (not is_finite_number(latency) or latency < 0):
        raise Invalid(f"{field}.latency_ms", "must be a number of milliseconds, 0 or more")
    escalated = data.get("escalated", False)
    if escalated is None:
        escalated = False
    if not isinstance(escalated, bool):
        raise Invalid(f"{field}.escalated", "must be true or false")
    error = data.get("error")
    if error is not None and not isinstance(error, str):
        raise Invalid(f"{field}.error", "must be a string")
    return {
        "item_id": item_id,
        "actual": finite_json(data.get("actual"), f"{field}.actual"),
        "trace_id": text(data.get("trace_id"), f"{field}.trace_id", MAX_ID_LENGTH),
        "product_id": text(data.get("product_id"), f"{field}.product_id", MAX_ID_LENGTH),
        "latency_ms": float(latency) if latency is not None else None,
        "escalated": escalated,
        "error": no_nul(error or "", f"{field}.error")[:MAX_TEXT],
    }


def recheck_value(data, field: str) -> tuple[str, object]:
    if not isinstance(data, dict):
        raise Invalid(field, "must be an object")
    item_id = data.get("item_id")
    if not isinstance(item_id, str) or not item_id:
        raise Invalid(f"{field}.item_id", "required: a non-empty string")
    if "current" not in data:
        raise Invalid(f"{field}.current", "required: the current true value")
    return item_id, finite_json(data["current"], f"{field}.current")
