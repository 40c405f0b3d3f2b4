"""Spans that cannot become nodes are refused one by one: the export answers 200
with partial_success counting them and saying why; the good spans are stored."""

import orjson
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
START = "1763629200000000000"


def span(span_id: str, trace_id: str = TRACE, **fields) -> dict:
    return {"traceId": trace_id, "spanId": span_id, "name": "step", "startTimeUnixNano": START, **fields}


def attribute(key: str, **value) -> dict:
    return {"key": key, "value": value}


def export(*spans) -> bytes:
    return orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]})


MIXED = export(
    span("00000000000000a1"),
    span("00000000000000a2", attributes=[attribute("denoise.confidence", stringValue="very sure")]),
    span("00000000000000a3", attributes=[attribute("denoise.confidence", doubleValue=1.7)]),
    span("00000000000000a4", startTimeUnixNano="0"),
    span("0000000000000000"),
    span("00000000000000a5", trace_id="00000000000000000000000000000000"),
    span("00000000000000a6", attributes=[attribute("denoise.fuse.decision", stringValue="maybe")]),
    span("00000000000000a7", parentSpanId="00000000000000a1",
         attributes=[attribute("denoise.confidence", stringValue="0.9")]),
)


def test_bad_spans_are_counted_and_explained_and_good_ones_stored(otlp_post, api):
    response = otlp_post(MIXED)

    assert response.status_code == 200
    partial = response.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "6"  # int64 is a string in OTLP/JSON
    message = partial["errorMessage"]
    assert message.startswith("6 of 8 spans rejected")
    assert f"span 00000000000000a2 (trace {TRACE}): confidence: must be a number" in message
    assert "confidence: 1.7 on a scale of 1.0 is outside [0, 1]" in message
    assert "startTimeUnixNano is missing" in message
    assert "spanId must be 8 bytes, not all zero" in message
    assert "and 1 more" in message  # the rest is summarised

    nodes = {n["product_id"]: n for n in api.get(f"/api/v1/traces/{TRACE}").json()["nodes"]}
    assert set(nodes) == {"00000000000000a1", "00000000000000a7"}
    assert nodes["00000000000000a7"]["confidence"] == 0.9  # a numeric string counts as a number


def test_partial_success_in_protobuf(otlp_post):
    request = ExportTraceServiceRequest()
    spans = request.resource_spans.add().scope_spans.add()
    good = spans.spans.add(trace_id=bytes.fromhex(TRACE), span_id=bytes.fromhex("00000000000000b1"),
                           name="ok", start_time_unix_nano=int(START))
    spans.spans.add(trace_id=bytes.fromhex(TRACE), span_id=b"\x01\x02", name="short id",
                    start_time_unix_nano=int(START))
    assert good.name == "ok"

    response = otlp_post(request.SerializeToString(), "application/x-protobuf")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-protobuf"
    answer = ExportTraceServiceResponse.FromString(response.content)
    assert answer.partial_success.rejected_spans == 1
    assert "spanId must be 8 bytes" in answer.partial_success.error_message


def test_a_resent_export_is_accepted_without_storing_twice(otlp_post, api):
    body = export(span("00000000000000c1"), span("00000000000000c2", parentSpanId="00000000000000c1"))
    assert otlp_post(body).json() == {}
    assert otlp_post(body).json() == {}
    assert api.get(f"/api/v1/traces/{TRACE}").json()["node_count"] == 2


def test_a_span_id_taken_by_another_trace_is_rejected(otlp_post, api):
    otlp_post(export(span("00000000000000d1")))
    response = otlp_post(export(span("00000000000000d1", trace_id="0af7651916cd43dd8448eb211c80319c")))
    assert response.json()["partialSuccess"]["rejectedSpans"] == "1"
    assert "already used" in response.json()["partialSuccess"]["errorMessage"]


def test_an_export_larger_than_one_ingest_batch_is_stored_whole(otlp_post, api, settings):
    settings.INGEST_MAX_EVENTS = 10
    spans = [span(format(i + 1, "016x")) for i in range(25)]
    assert otlp_post(export(*spans)).json() == {}
    assert api.get(f"/api/v1/traces/{TRACE}").json()["node_count"] == 25
