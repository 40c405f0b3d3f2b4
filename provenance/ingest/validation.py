"""Validation of ingest events.

Hand-written rather than DRF serializers: a batch of 1,000 events is validated
in a few milliseconds, and each message names the field and the rule, in the
form the contract shows (`confidence: must be a number`).
"""

import re
from dataclasses import dataclass, field
from datetime import datetime

from core.errors import ApiError
from core.numbers import is_finite_number
from core.timestamps import parse_instant
from provenance.ingest.json_limits import PAST_64_BITS, deeper_than, number_past_64_bits, plainly_within
from provenance.models import FuseDecision, ReviewVerdict

MAX_ID_LENGTH = 255
MAX_PARENTS = 1000  # per node; also bounds an OTLP span's links
MAX_DEPTH = 64  # nesting of metadata and metrics, the object itself being level 1
MAX_INT = 2**31 - 1  # integer columns are 32-bit
EVENT_TYPES = ("node", "fuse", "review", "escalation")
SOURCE_TYPE_MAX = 64
REASON_CODE_MAX = 64
FUSE_DECISIONS = {decision.label: decision for decision in FuseDecision if decision != FuseDecision.NONE}
VERDICTS = {v.value for v in ReviewVerdict}
ENVIRONMENT = re.compile(r"[A-Za-z0-9_-]{1,50}")
# Bounds far above any real step, so that sums over millions of nodes stay
# finite (a float8 overflow would be a 500 in every read that adds them up).
MAX_DURATION_MS = 1e10  # about 116 days
MAX_COST_USD = 1e6
USAGE_KEYS = ("input_tokens", "output_tokens")


class EventError(ApiError):
    """One event refused: its entry in the ingest's 207 carries the status and message."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message, status=status)


@dataclass(slots=True)
class InlineFuse:
    decision: int
    reason: str
    threshold: float | None
    reason_code: str = ""
    policy_version: int | None = None
    by_agent_id: str = ""


@dataclass(slots=True)
class NodeEvent:
    event_id: str
    timestamp: datetime
    trace_id: str
    product_id: str
    agent_id: str
    step: str
    source_type: str
    content: str
    raw_input: str
    confidence: float | None
    confidence_raw: float | None
    confidence_scale: float
    parent_ids: list[str]
    round: int | None
    is_error: bool
    metrics: dict
    metadata: dict
    fuse: InlineFuse | None
    retry_of: str = ""
    attempt: int | None = None
    environment: str | None = None  # None: the node names none (its trace's, or the default)
    duration_ms: float | None = None
    model: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None


@dataclass(slots=True)
class FuseEvent:
    event_id: str
    timestamp: datetime
    trace_id: str
    product_id: str
    fuse: InlineFuse


@dataclass(slots=True)
class ReviewEvent:
    event_id: str
    timestamp: datetime
    trace_id: str
    product_id: str
    verdict: str
    comment: str = field(default="")


@dataclass(slots=True)
class EscalationEvent:
    event_id: str
    timestamp: datetime
    trace_id: str
    product_id: str
    reason: str
    by_agent_id: str


def parse_timestamp(value) -> datetime:
    try:
        return parse_instant(value)
    except ValueError as error:
        raise EventError(f"timestamp: {error}") from None


def required_str(body: dict, name: str) -> str:
    value = body.get(name)
    if value is None:
        raise EventError(f"{name}: is required")
    if not isinstance(value, str) or not value:
        raise EventError(f"{name}: must be a non-empty string")
    if len(value) > MAX_ID_LENGTH:
        raise EventError(f"{name}: longer than {MAX_ID_LENGTH} characters")
    if "\x00" in value:
        raise EventError(f"{name}: must not contain NUL characters")
    return value


def optional_id(body: dict, name: str) -> str:
    """An optional reference to another id ("" when absent): the rules of an id, or absent."""
    return "" if body.get(name) is None else required_str(body, name)


def optional_str(body: dict, name: str, max_length: int | None = MAX_ID_LENGTH) -> str:
    value = body.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise EventError(f"{name}: must be a string")
    if max_length is not None and len(value) > max_length:
        raise EventError(f"{name}: longer than {max_length} characters")
    if "\x00" in value:
        # PostgreSQL text cannot hold NUL; keep the rest of the agent's text.
        value = value.replace("\x00", "\ufffd")
    return value


def optional_int(body: dict, name: str, minimum: int) -> int | None:
    value = body.get(name)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or not minimum <= value <= MAX_INT):
        raise EventError(f"{name}: must be an integer from {minimum} to {MAX_INT}")
    return value


def optional_amount(body: dict, name: str, maximum: float) -> float | None:
    """A non-negative number no larger than `maximum`, or None when absent."""
    value = body.get(name)
    if value is None:
        return None
    if not is_finite_number(value) or not 0 <= value <= maximum:
        raise EventError(f"{name}: must be a number from 0 to {maximum:g}")
    return float(value)


def parse_environment(body: dict) -> str | None:
    value = body.get("environment")
    if value is None:
        return None
    if not isinstance(value, str) or not ENVIRONMENT.fullmatch(value):
        raise EventError("environment: must be 1 to 50 letters, digits, '-' or '_'")
    return value


def parse_usage(body: dict) -> tuple[int | None, int | None]:
    """(input_tokens, output_tokens) of `usage`, both or neither."""
    usage = body.get("usage")
    if usage is None:
        return None, None
    if not isinstance(usage, dict):
        raise EventError("usage: must be an object {\"input_tokens\": int, \"output_tokens\": int}")
    for key in usage:
        if key not in USAGE_KEYS:
            raise EventError(f"usage.{str(key)[:40]}: unknown key (expected input_tokens, output_tokens)")
    counts = []
    for key in USAGE_KEYS:
        if usage.get(key) is None:
            raise EventError(f"usage.{key}: is required")
        try:
            counts.append(optional_int(usage, key, 0))
        except EventError as error:
            raise EventError(f"usage.{error.message}") from None
    return counts[0], counts[1]


def optional_object(body: dict, name: str) -> dict:
    value = body.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise EventError(f"{name}: must be an object")
    if plainly_within(value, MAX_DEPTH):
        return value
    if deeper_than(value, MAX_DEPTH):
        raise EventError(f"{name}: nested deeper than {MAX_DEPTH} levels")
    if field := number_past_64_bits(value, name):
        raise EventError(f"{field}: {PAST_64_BITS}")
    return value



def parse_fuse(value, prefix: str) -> InlineFuse:
    if not isinstance(value, dict):
        raise EventError(f"{prefix.rstrip('.') or 'body'}: must be an object")
    decision = value.get("decision")
    if not isinstance(decision, str) or decision not in FUSE_DECISIONS:
        raise EventError(f"{prefix}decision: must be one of accept, downweight, block")
    threshold = value.get("threshold")
    if threshold is not None and not is_finite_number(threshold):
        raise EventError(f"{prefix}threshold: must be a number")
    reason_code = value.get("reason_code")
    if reason_code is not None and (
        not isinstance(reason_code, str) or not reason_code.strip() or len(reason_code) > REASON_CODE_MAX
        or not reason_code.isprintable()
    ):
        raise EventError(
            f"{prefix}reason_code: must be a short code (1 to {REASON_CODE_MAX} printable characters), e.g. 'below_block'"
        )
    try:
        policy_version = optional_int(value, "policy_version", 0)
    except EventError as error:
        raise EventError(prefix + error.message) from None
    return InlineFuse(
        decision=FUSE_DECISIONS[decision],
        reason=optional_str(value, "reason", None) if "reason" in value else "",
        threshold=None if threshold is None else float(threshold),
        reason_code=(reason_code or "").strip(),
        policy_version=policy_version,
    )


def parse_node(event_id: str, timestamp: datetime, body: dict) -> NodeEvent:
    trace_id = required_str(body, "trace_id")
    product_id = required_str(body, "product_id")
    agent_id = required_str(body, "agent_id")

    scale = body.get("confidence_scale", 1)
    if scale is None:
        scale = 1
    if not is_finite_number(scale) or scale <= 0:
        raise EventError("confidence_scale: must be a positive number")
    raw = body.get("confidence")
    confidence = None
    if raw is not None:
        if not is_finite_number(raw):
            raise EventError("confidence: must be a number")
        raw, scale = float(raw), float(scale)
        confidence = raw / scale
        if not 0.0 <= confidence <= 1.0:
            raise EventError(f"confidence: {raw} on a scale of {scale} is outside [0, 1]")

    parent_ids = body.get("parent_ids")
    if parent_ids is None:
        parent_ids = []
    elif isinstance(parent_ids, list) and len(parent_ids) > MAX_PARENTS:
        raise EventError(f"parent_ids: at most {MAX_PARENTS} ids per node (got {len(parent_ids)})")
    elif not isinstance(parent_ids, list) or not all(isinstance(p, str) and p for p in parent_ids):
        raise EventError("parent_ids: must be a list of non-empty strings")
    elif any(len(p) > MAX_ID_LENGTH for p in parent_ids):
        raise EventError(f"parent_ids: an id is longer than {MAX_ID_LENGTH} characters")
    elif any("\x00" in p for p in parent_ids):
        raise EventError("parent_ids: an id contains a NUL character")
    # A parent listed twice is one edge; order is kept for display.
    parent_ids = list(dict.fromkeys(parent_ids))

    round_ = optional_int(body, "round", 1)
    attempt = optional_int(body, "attempt", 1)
    retry_of = optional_id(body, "retry_of")
    if retry_of == product_id:
        raise EventError("retry_of: must name another node than product_id")

    status = body.get("status", "ok")
    if status not in ("ok", "error", None):
        raise EventError("status: must be 'ok' or 'error'")

    fuse = parse_fuse(body["fuse"], "fuse.") if body.get("fuse") is not None else None
    if fuse is not None:
        fuse.by_agent_id = agent_id
    input_tokens, output_tokens = parse_usage(body)

    return NodeEvent(
        event_id=event_id,
        timestamp=timestamp,
        trace_id=trace_id,
        product_id=product_id,
        agent_id=agent_id,
        step=optional_str(body, "step"),
        source_type=optional_str(body, "source_type", SOURCE_TYPE_MAX),
        content=optional_str(body, "content", None),
        raw_input=optional_str(body, "raw_input", None),
        confidence=confidence,
        confidence_raw=raw,
        confidence_scale=float(scale),
        parent_ids=parent_ids,
        round=round_,
        is_error=status == "error",
        metrics=optional_object(body, "metrics"),
        metadata=optional_object(body, "metadata"),
        fuse=fuse,
        retry_of=retry_of,
        attempt=attempt,
        environment=parse_environment(body),
        duration_ms=optional_amount(body, "duration_ms", MAX_DURATION_MS),
        model=optional_str(body, "model"),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_usd=optional_amount(body, "cost_usd", MAX_COST_USD),
    )


def parse_fuse_event(event_id: str, timestamp: datetime, body: dict) -> FuseEvent:
    trace_id = required_str(body, "trace_id")
    product_id = required_str(body, "product_id")
    fuse = parse_fuse(body, "")
    fuse.by_agent_id = optional_str(body, "by_agent_id")
    return FuseEvent(event_id, timestamp, trace_id, product_id, fuse)


def parse_review(event_id: str, timestamp: datetime, body: dict) -> ReviewEvent:
    trace_id = required_str(body, "trace_id")
    product_id = optional_str(body, "product_id")
    verdict = body.get("verdict")
    if not isinstance(verdict, str) or verdict not in VERDICTS:
        raise EventError("verdict: must be 'correct' or 'incorrect'")
    return ReviewEvent(event_id, timestamp, trace_id, product_id, verdict, optional_str(body, "comment", None))


def parse_escalation(event_id: str, timestamp: datetime, body: dict) -> EscalationEvent:
    trace_id = required_str(body, "trace_id")
    product_id = required_str(body, "product_id")
    reason = body.get("reason")
    if reason is None:
        raise EventError("reason: is required")
    reason = optional_str(body, "reason", None)
    return EscalationEvent(event_id, timestamp, trace_id, product_id, reason, optional_str(body, "by_agent_id"))


PARSERS = {"node": parse_node, "fuse": parse_fuse_event, "review": parse_review, "escalation": parse_escalation}


def event_id_of(event) -> str | None:
    """The id to report a result under, even for an event that is otherwise bad."""
    if isinstance(event, dict) and isinstance(event.get("id"), str):
        return event["id"]
    return None


Event = NodeEvent | FuseEvent | ReviewEvent | EscalationEvent


def parse_event(event) -> Event:
    if not isinstance(event, dict):
        raise EventError("event: must be an object")
    event_id = event.get("id")
    if not isinstance(event_id, str) or not event_id:
        raise EventError("id: must be a non-empty string")
    if len(event_id) > MAX_ID_LENGTH:
        raise EventError(f"id: longer than {MAX_ID_LENGTH} characters")
    if "\x00" in event_id:
        raise EventError("id: must not contain NUL characters")
    kind = event.get("type")
    if not isinstance(kind, str) or kind not in PARSERS:
        raise EventError(f"type: must be one of {', '.join(EVENT_TYPES)}")
    timestamp = parse_timestamp(event.get("timestamp"))
    body = event.get("body")
    if not isinstance(body, dict):
        raise EventError("body: must be an object")
    return PARSERS[kind](event_id, timestamp, body)
