"""Validation of ingest events.

Hand-written rather than DRF serializers: a batch of 1,000 events is validated
in a few milliseconds, and each message names the field and the rule, in the
form the contract shows (`confidence: must be a number`).
"""

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime

from provenance.models import FuseDecision, Verdict

MAX_ID_LENGTH = 255
MAX_ROUND = 2**31 - 1  # the column is a 32-bit integer
EVENT_TYPES = ("node", "fuse", "review")
SOURCE_TYPE_MAX = 64
FUSE_DECISIONS = {"accept": FuseDecision.ACCEPT, "downweight": FuseDecision.DOWNWEIGHT, "block": FuseDecision.BLOCK}
VERDICTS = {v.value for v in Verdict}


class EventError(Exception):
    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass(slots=True)
class InlineFuse:
    decision: int
    reason: str
    threshold: float | None
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


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def parse_timestamp(value) -> datetime:
    if not isinstance(value, str):
        raise EventError("timestamp: must be an ISO 8601 string")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise EventError(f"timestamp: {value[:40]!r} is not ISO 8601") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


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


def optional_object(body: dict, name: str) -> dict:
    value = body.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise EventError(f"{name}: must be an object")
    return value


def parse_fuse(value, prefix: str) -> InlineFuse:
    if not isinstance(value, dict):
        raise EventError(f"{prefix.rstrip('.') or 'body'}: must be an object")
    decision = value.get("decision")
    if decision not in FUSE_DECISIONS:
        raise EventError(f"{prefix}decision: must be one of accept, downweight, block")
    threshold = value.get("threshold")
    if threshold is not None and not is_number(threshold):
        raise EventError(f"{prefix}threshold: must be a number")
    return InlineFuse(
        decision=FUSE_DECISIONS[decision],
        reason=optional_str(value, "reason", None) if "reason" in value else "",
        threshold=None if threshold is None else float(threshold),
    )


def parse_node(event_id: str, timestamp: datetime, body: dict) -> NodeEvent:
    trace_id = required_str(body, "trace_id")
    product_id = required_str(body, "product_id")
    agent_id = required_str(body, "agent_id")

    scale = body.get("confidence_scale", 1)
    if scale is None:
        scale = 1
    if not is_number(scale) or scale <= 0:
        raise EventError("confidence_scale: must be a positive number")
    raw = body.get("confidence")
    confidence = None
    if raw is not None:
        if not is_number(raw):
            raise EventError("confidence: must be a number")
        raw, scale = float(raw), float(scale)
        confidence = raw / scale
        if not 0.0 <= confidence <= 1.0:
            raise EventError(f"confidence: {raw} on a scale of {scale} is outside [0, 1]")

    parent_ids = body.get("parent_ids")
    if parent_ids is None:
        parent_ids = []
    elif not isinstance(parent_ids, list) or not all(isinstance(p, str) and p for p in parent_ids):
        raise EventError("parent_ids: must be a list of non-empty strings")
    elif any(len(p) > MAX_ID_LENGTH for p in parent_ids):
        raise EventError(f"parent_ids: an id is longer than {MAX_ID_LENGTH} characters")
    elif any("\x00" in p for p in parent_ids):
        raise EventError("parent_ids: an id contains a NUL character")
    # A parent listed twice is one edge; order is kept for display.
    parent_ids = list(dict.fromkeys(parent_ids))

    round_ = body.get("round")
    if round_ is not None and (
        not isinstance(round_, int) or isinstance(round_, bool) or not 1 <= round_ <= MAX_ROUND
    ):
        raise EventError(f"round: must be an integer from 1 to {MAX_ROUND}")

    status = body.get("status", "ok")
    if status not in ("ok", "error", None):
        raise EventError("status: must be 'ok' or 'error'")

    fuse = parse_fuse(body["fuse"], "fuse.") if body.get("fuse") is not None else None
    if fuse is not None:
        fuse.by_agent_id = agent_id

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
    if verdict not in VERDICTS:
        raise EventError("verdict: must be 'correct' or 'incorrect'")
    return ReviewEvent(event_id, timestamp, trace_id, product_id, verdict, optional_str(body, "comment", None))


PARSERS = {"node": parse_node, "fuse": parse_fuse_event, "review": parse_review}


def event_id_of(event) -> str | None:
    """The id to report a result under, even for an event that is otherwise bad."""
    if isinstance(event, dict) and isinstance(event.get("id"), str):
        return event["id"]
    return None


def parse_event(event) -> NodeEvent | FuseEvent | ReviewEvent:
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
    if kind not in PARSERS:
        raise EventError("type: must be one of node, fuse, review")
    timestamp = parse_timestamp(event.get("timestamp"))
    body = event.get("body")
    if not isinstance(body, dict):
        raise EventError("body: must be an object")
    return PARSERS[kind](event_id, timestamp, body)
