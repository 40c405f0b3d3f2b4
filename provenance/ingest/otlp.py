"""OTLP/HTTP trace exports as ingest events: decoding, span mapping, answers.

Pure functions: bytes in, ingest event dicts and encoded answers out. The view
authenticates and stores; storing goes through `ingest.ingest_events`, so spans
are validated and written exactly like JSON batches, and a resent export is
idempotent because each event id is derived from its trace and span ids.
"""

import base64
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import orjson
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from core.errors import ApiError
from provenance.ingest import span_conventions
from provenance.ingest.validation import MAX_PARENTS

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
MEDIA_TYPES = {"application/x-protobuf": PROTOBUF, "application/protobuf": PROTOBUF, "application/json": JSON}

EVENT_ID_PREFIX = "otlp:"
UNKNOWN_SERVICE = "unknown_service"  # what OpenTelemetry SDKs report when service.name is unset
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MAX_REPORTED_REJECTIONS = 5

# Span attributes that name node fields; everything else goes to metadata.
NUMBER_ATTRIBUTES = {"denoise.confidence": "confidence", "denoise.confidence_scale": "confidence_scale",
                     "denoise.cost_usd": "cost_usd"}
ENVIRONMENT_ATTRIBUTES = ("deployment.environment.name", "deployment.environment")
TEXT_ATTRIBUTES = {
    "denoise.step": "step",
    "denoise.source_type": "source_type",
    "denoise.content": "content",
    "denoise.raw_input": "raw_input",
    "denoise.retry_of": "retry_of",
}
INT_ATTRIBUTES = {"denoise.round": "round", "denoise.attempt": "attempt"}
METRIC_PREFIX = "denoise.metrics."

# google.rpc.Code values for the Status body of a failed export.
GRPC_CODES = {400: 3, 401: 16, 403: 7, 404: 5, 405: 12, 413: 3, 415: 3, 429: 8, 503: 14}
GRPC_INTERNAL = 13


class BadRequest(ApiError):
    """The export cannot be decoded at all: 400, nothing stored."""

    def __init__(self, reason: str):
        super().__init__(f"{reason}; nothing was stored")


@dataclass
class Conversion:
    # One node event per span, and the reviews that evaluations on spans imply.
    events: list[dict] = field(default_factory=list)
    # Spans refused before ingest (no usable ids or timestamp), as messages.
    rejections: list[str] = field(default_factory=list)
    span_count: int = 0


def media_type(content_type: str) -> str | None:
    """The OTLP encoding a Content-Type header names, or None if unsupported."""
    return MEDIA_TYPES.get(content_type.split(";", 1)[0].strip().lower())


def decode_request(body: bytes, media: str) -> ExportTraceServiceRequest:
    if media == PROTOBUF:
        try:
            return ExportTraceServiceRequest.FromString(body)
        except DecodeError as error:
            raise BadRequest(f"body is not a protobuf ExportTraceServiceRequest: {error}") from None
    return decode_json(body)


def decode_json(body: bytes) -> ExportTraceServiceRequest:
    """OTLP/JSON: the protobuf JSON mapping, except that trace and span ids are
    hex rather than base64. They are rewritten to base64 so the standard parser
    does the rest (camelCase names, int64 as strings or numbers, unknown fields
    ignored as the specification requires)."""
    try:
        payload = orjson.loads(body) if body.strip() else {}
    except orjson.JSONDecodeError as error:
        raise BadRequest(f"body is not valid JSON: {error}") from None
    if not isinstance(payload, dict):
        raise BadRequest("body must be a JSON object (an ExportTraceServiceRequest)")
    for r, resource_spans in enumerate(children(payload, "resourceSpans", "resource_spans")):
        for s, scope_spans in enumerate(children(resource_spans, "scopeSpans", "scope_spans")):
            for i, span in enumerate(children(scope_spans, "spans")):
                where = f"resourceSpans[{r}].scopeSpans[{s}].spans[{i}]"
                hex_ids_to_base64(span, where, ("traceId", "trace_id", "spanId", "span_id", "parentSpanId", "parent_span_id"))
                for k, link in enumerate(children(span, "links")):
                    hex_ids_to_base64(link, f"{where}.links[{k}]", ("traceId", "trace_id", "spanId", "span_id"))
    try:
        return json_format.ParseDict(payload, ExportTraceServiceRequest(), ignore_unknown_fields=True)
    except json_format.ParseError as error:
        raise BadRequest(f"body is not an OTLP/JSON ExportTraceServiceRequest: {error}") from None


def children(message, *names) -> list:
    """A repeated field of a JSON message, tolerating its absence; the parser
    reports anything of the wrong type."""
    if not isinstance(message, dict):
        return []
    for name in names:
        value = message.get(name)
        if isinstance(value, list):
            return value
    return []


def hex_ids_to_base64(message, where: str, names: tuple[str, ...]) -> None:
    if not isinstance(message, dict):
        return
    for name in names:
        value = message.get(name)
        if not isinstance(value, str):
            continue
        try:
            message[name] = base64.b64encode(bytes.fromhex(value)).decode()
        except ValueError:
            raise BadRequest(f"{where}.{name}: {value[:40]!r} is not a hex string") from None


def any_value(value):
    """An OTLP AnyValue as plain JSON-able Python."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return attributes(value.kvlist_value.values)
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return getattr(value, kind)


def attributes(key_values) -> dict:
    return {kv.key: any_value(kv.value) for kv in key_values}


def as_number(value):
    """Numbers sent as strings (some SDKs only set string attributes) count as
    numbers; anything else is passed on for ingest validation to name."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def as_int(value):
    value = as_number(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def timestamp_of(span: Span) -> str | None:
    nanos = span.start_time_unix_nano or span.end_time_unix_nano
    if not nanos:
        return None
    return (EPOCH + timedelta(microseconds=nanos // 1000)).isoformat()


def end_timestamp_of(span: Span) -> str | None:
    if not span.end_time_unix_nano:
        return None
    return (EPOCH + timedelta(microseconds=span.end_time_unix_nano // 1000)).isoformat()


def event_id_for(trace_hex: str, span_hex: str) -> str:
    return f"{EVENT_ID_PREFIX}{trace_hex}:{span_hex}"


def span_label(event_id: str | None) -> str:
    trace_hex, _, span_hex = (event_id or "").removeprefix(EVENT_ID_PREFIX).partition(":")
    return f"span {span_hex} (trace {trace_hex})" if span_hex else "span"


def convert(request: ExportTraceServiceRequest) -> Conversion:
    """Every span of an export as one `node` ingest event."""
    result = Conversion()
    for resource_spans in request.resource_spans:
        resource = attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            scope = scope_spans.scope
            for span in scope_spans.spans:
                result.span_count += 1
                try:
                    result.events += span_events(span, resource, scope)
                except ValueError as error:
                    result.rejections.append(str(error))
    return result


def span_events(span: Span, resource: dict, scope) -> list[dict]:
    """One span as a `node` event, followed by the `review` events its evaluation
    attributes imply; ValueError names why it cannot be a node."""
    if len(span.trace_id) != 16 or not any(span.trace_id):
        raise ValueError(f"span {span.span_id.hex() or '?'}: traceId must be 16 bytes, not all zero")
    trace_hex = span.trace_id.hex()
    if len(span.span_id) != 8 or not any(span.span_id):
        raise ValueError(f"span in trace {trace_hex}: spanId must be 8 bytes, not all zero")
    span_hex = span.span_id.hex()
    if span.parent_span_id and len(span.parent_span_id) != 8:
        raise ValueError(f"span {span_hex} (trace {trace_hex}): parentSpanId must be 8 bytes")
    if len(span.links) > MAX_PARENTS:
        raise ValueError(f"span {span_hex} (trace {trace_hex}): more than {MAX_PARENTS} links ({len(span.links)})")
    timestamp = timestamp_of(span)
    if timestamp is None:
        raise ValueError(f"span {span_hex} (trace {trace_hex}): startTimeUnixNano is missing")

    attrs = attributes(span.attributes)
    parent_ids = [span.parent_span_id.hex()] if any(span.parent_span_id) else []
    # Span links are extra parents: the span consumed what the linked span produced.
    linked = [link for link in span.links if len(link.span_id) == 8 and any(link.span_id)]
    parent_ids += [link.span_id.hex() for link in linked]

    failed = span.status.code == Status.STATUS_CODE_ERROR
    # OpenInference / GenAI conventions first; every denoise.* attribute below overrides them.
    implied = span_conventions.read(attrs, failed)
    body = {
        "trace_id": trace_hex,
        "product_id": span_hex,
        "agent_id": attrs.pop("denoise.agent_id", None)
        or implied.agent_id
        or resource.get("service.name")
        or UNKNOWN_SERVICE,
        "step": implied.step or span.name,
        "parent_ids": parent_ids,
        "status": "error" if failed else "ok",
    }
    if implied.source_type:
        body["source_type"] = implied.source_type
    if span.start_time_unix_nano and span.end_time_unix_nano:
        body["duration_ms"] = (span.end_time_unix_nano - span.start_time_unix_nano) / 1e6
    if implied.model:
        body["model"] = implied.model
    if implied.usage:
        body["usage"] = implied.usage
    environment = next((resource[key] for key in ENVIRONMENT_ATTRIBUTES if resource.get(key) is not None), None)
    if environment is not None:
        body["environment"] = environment
    if implied.raw_input is not None and "denoise.raw_input" not in attrs:
        body["raw_input"] = implied.raw_input
        attrs.pop("input.value", None)
    if implied.content is not None and "denoise.content" not in attrs:
        body["content"] = implied.content
        attrs.pop("output.value", None)
    if implied.confidence is not None and not {"denoise.confidence", "denoise.confidence_scale"} & attrs.keys():
        body["confidence"] = implied.confidence
    for key, name in NUMBER_ATTRIBUTES.items():
        if key in attrs:
            body[name] = as_number(attrs.pop(key))
    for key, name in TEXT_ATTRIBUTES.items():
        if key in attrs:
            value = attrs.pop(key)
            body[name] = value if isinstance(value, str) or value is None else str(value)
    for key, name in INT_ATTRIBUTES.items():
        if key in attrs:
            body[name] = as_int(attrs.pop(key))
    metrics = {**implied.metrics,
               **{key.removeprefix(METRIC_PREFIX): attrs.pop(key) for key in list(attrs) if key.startswith(METRIC_PREFIX)}}
    if metrics:
        body["metrics"] = metrics
    decision = attrs.pop("denoise.fuse.decision", None)
    reason = attrs.pop("denoise.fuse.reason", None)
    threshold = attrs.pop("denoise.fuse.threshold", None)
    reason_code = attrs.pop("denoise.fuse.reason_code", None)
    policy_version = attrs.pop("denoise.fuse.policy_version", None)
    if decision is not None:
        body["fuse"] = {"decision": decision, "reason": "" if reason is None else str(reason)}
        if threshold is not None:
            body["fuse"]["threshold"] = as_number(threshold)
        if reason_code is not None:
            body["fuse"]["reason_code"] = reason_code
        if policy_version is not None:
            body["fuse"]["policy_version"] = as_int(policy_version)
    elif implied.fuse:
        body["fuse"] = implied.fuse

    otel = {
        "span_name": span.name,
        "kind": Span.SpanKind.Name(span.kind) if span.kind in Span.SpanKind.values() else span.kind,
        "scope": scope.name,
        "resource": resource,
    }
    if span.status.message:
        otel["status_message"] = span.status.message
    other_trace_links = [
        {"trace_id": link.trace_id.hex(), "span_id": link.span_id.hex()} for link in linked if link.trace_id != span.trace_id
    ]
    if other_trace_links:
        otel["links"] = other_trace_links
    body["metadata"] = {**implied.metadata, **attrs, "otel": otel}
    node = {"id": event_id_for(trace_hex, span_hex), "type": "node", "timestamp": timestamp, "body": body}
    return [node, *review_events(trace_hex, span_hex, end_timestamp_of(span) or timestamp, implied.reviews)]


def review_events(trace_hex: str, span_hex: str, timestamp: str, reviews: list[tuple[str, str, bool]]) -> list[dict]:
    """An evaluation's verdict as a review: of the trace's answer when an
    evaluator span judged it, else of the span's own node."""
    events = []
    for index, (verdict, comment, whole_trace) in enumerate(reviews):
        body = {"trace_id": trace_hex, "verdict": verdict, "comment": comment}
        if not whole_trace:
            body["product_id"] = span_hex
        events.append({"id": f"{event_id_for(trace_hex, span_hex)}:review:{index}", "type": "review",
                       "timestamp": timestamp, "body": body})
    return events


def partial_success(total: int, rejections: list[str]) -> ExportTraceServiceResponse:
    """The answer to a decoded export; `partial_success` only when spans were refused."""
    response = ExportTraceServiceResponse()
    if rejections:
        shown = "; ".join(rejections[:MAX_REPORTED_REJECTIONS])
        more = len(rejections) - MAX_REPORTED_REJECTIONS
        suffix = f"; and {more} more" if more > 0 else ""
        response.partial_success.rejected_spans = len(rejections)
        response.partial_success.error_message = f"{len(rejections)} of {total} spans rejected: {shown}{suffix}"
    return response


def encode_response(response: ExportTraceServiceResponse, media: str) -> bytes:
    if media == JSON:
        return json_format.MessageToJson(response, indent=None).encode()
    return response.SerializeToString()


def encode_status(message: str, http_status: int, media: str) -> bytes:
    """A google.rpc.Status body, as the specification requires for every 4xx/5xx.
    Written by hand: it is two fields, and the runtime needs no googleapis package."""
    code = GRPC_CODES.get(http_status, GRPC_INTERNAL)
    if media == JSON:
        return orjson.dumps({"code": code, "message": message})
    text = message.encode()
    return b"\x08" + varint(code) + b"\x12" + varint(len(text)) + text


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)
