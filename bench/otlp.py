#!/usr/bin/env python
"""OTLP/HTTP ingest and the denoiseflow SDK, against the native JSON ingest they build on.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/x .venv/bin/python bench/otlp.py [--spans 10000] [--keep]

On a scratch database (`denoise_bench_otlp`, recreated, dropped at the end unless --keep), with the same spans
(traces of 20, a parent and sometimes a link each, the denoise attributes):
1. baseline: the spans as native `node` events, POSTed to /api/v1/ingest in batches of 500;
2. OTLP protobuf exports of 500 spans to /v1/traces (the SDK exporter's batch size);
3. OTLP/JSON exports of 500 spans;
4. the SDK recorder: record() per node, delivered over HTTP by its background
   thread, against a plain client posting the same events in batches of 500.
Prints spans/s and each figure's ratio to its baseline measured in the same run.
"""

import argparse
import base64
import json
import random
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.scratch import scratch_django  # noqa: E402

DATABASE = "denoise_bench_otlp"
EXPORT_SIZE = 500
TRACE_SIZE = 20


def build_request(count: int, seed: int):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import KeyValue

    rng = random.Random(seed)
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.append(KeyValue(key="service.name", value={"string_value": "bench"}))
    spans = resource_spans.scope_spans.add().spans
    start = 1_763_629_200_000_000_000
    trace_id = b""
    for i in range(count):
        position = i % TRACE_SIZE
        if position == 0:
            trace_id = rng.randbytes(16)
        span = spans.add(trace_id=trace_id, span_id=(seed * 10**7 + i + 1).to_bytes(8, "big"),
                         name=("intent", "entity_extraction", "retrieval", "reasoning")[position % 4],
                         start_time_unix_nano=start + i * 10**6, end_time_unix_nano=start + i * 10**6 + 5 * 10**5)
        if position:
            span.parent_span_id = (seed * 10**7 + i).to_bytes(8, "big")
        if position > 2 and rng.random() < 0.3:
            span.links.add(trace_id=trace_id, span_id=(seed * 10**7 + i - 2).to_bytes(8, "big"))
        confidence = round(rng.random(), 3)
        span.attributes.append(KeyValue(key="denoise.confidence", value={"double_value": confidence}))
        span.attributes.append(KeyValue(key="denoise.round", value={"int_value": 1}))
        span.attributes.append(KeyValue(key="gen_ai.request.model", value={"string_value": "fake-llm-1"}))
        if confidence < 0.5:
            span.attributes.append(KeyValue(key="denoise.fuse.decision", value={"string_value": "block"}))
            span.attributes.append(KeyValue(key="denoise.fuse.reason", value={"string_value": "below 0.5"}))
    return request


def exports(request, size: int):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    spans = request.resource_spans[0].scope_spans[0].spans
    for start in range(0, len(spans), size):
        part = ExportTraceServiceRequest()
        rs = part.resource_spans.add()
        rs.resource.CopyFrom(request.resource_spans[0].resource)
        rs.scope_spans.add().spans.extend(spans[start : start + size])
        yield part


def as_json(part) -> bytes:
    """OTLP/JSON: the protobuf JSON mapping with hex ids."""
    from google.protobuf import json_format

    payload = json_format.MessageToDict(part)
    for span in payload["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for key in ("traceId", "spanId", "parentSpanId"):
            if key in span:
                span[key] = base64.b64decode(span[key]).hex()
        for link in span.get("links", []):
            for key in ("traceId", "spanId"):
                link[key] = base64.b64decode(link[key]).hex()
    return json.dumps(payload).encode()


def timed(label: str, count: int, run) -> float:
    started = time.perf_counter()
    run()
    seconds = time.perf_counter() - started
    print(f"  {label:<44} {count / seconds:>9,.0f} spans/s  ({seconds:.2f} s)")
    return count / seconds


def post(url: str, body: bytes, content_type: str, key: str) -> int:
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": content_type, "Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request, timeout=120) as response:
        response.read()
        return response.status


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--spans", type=int, default=10_000)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    args = parser.parse_args()

    with scratch_django(DATABASE, keep=args.keep):
        measure(args.spans)


def measure(n: int) -> None:
    from demo.local_server import serving
    from denoiseflow import Recorder
    from provenance.ingest import otlp
    from tenancy.models import Project

    project = Project.objects.create(slug="bench")
    _, key = project.issue_api_key()
    print(f"{n} spans, exports of {EXPORT_SIZE}, database {DATABASE}")

    with serving() as base:
        post(f"{base}/api/v1/ingest", b'{"batch": []}', "application/json", key)  # warm up

        # Bodies are prepared before timing: each figure is the server's (and the wire's) cost.
        events = otlp.convert(build_request(n, 1)).events
        native_bodies = [json.dumps({"batch": events[start : start + EXPORT_SIZE]}).encode()
                         for start in range(0, n, EXPORT_SIZE)]
        protobuf_bodies = [part.SerializeToString() for part in exports(build_request(n, 2), EXPORT_SIZE)]
        json_bodies = [as_json(part) for part in exports(build_request(n, 3), EXPORT_SIZE)]

        def sender(path: str, bodies: list[bytes], content_type: str):
            return lambda: [post(f"{base}{path}", body, content_type, key) for body in bodies]

        native = sender("/api/v1/ingest", native_bodies, "application/json")
        protobuf = sender("/v1/traces", protobuf_bodies, "application/x-protobuf")
        otlp_json = sender("/v1/traces", json_bodies, "application/json")

        print("ingest over HTTP (one client):")
        baseline = timed("native JSON /api/v1/ingest (baseline)", n, native)
        for label, run in (("OTLP protobuf /v1/traces", protobuf), ("OTLP/JSON /v1/traces", otlp_json)):
            rate = timed(label, n, run)
            print(f"  {'':<44} ratio to baseline: {rate / baseline:.2f}")

        events = [{"id": f"plain-{i}", "type": "node", "timestamp": "2026-11-20T09:00:00+00:00",
                   "body": {"trace_id": f"plain-{i // TRACE_SIZE}", "product_id": f"plain-{i}", "agent_id": "a",
                            "confidence": 0.7, "parent_ids": [f"plain-{i - 1}"] if i % TRACE_SIZE else []}}
                  for i in range(n)]

        plain_client = sender("/api/v1/ingest", [json.dumps({"batch": events[start : start + EXPORT_SIZE]}).encode()
                                                  for start in range(0, n, EXPORT_SIZE)], "application/json")

        recorder = Recorder(base, key, batch_size=EXPORT_SIZE, max_buffer=n + 1)
        record_seconds = []

        def sdk():
            started = time.perf_counter()
            previous = None
            for i in range(n):
                trace = f"sdk-{i // TRACE_SIZE}"
                previous = recorder.record(trace, "a", confidence=0.7, product_id=f"sdk-{i}",
                                           parent_ids=[previous] if i % TRACE_SIZE else [])
            record_seconds.append(time.perf_counter() - started)
            assert recorder.close(timeout=600), recorder.stats()

        print("agent side:")
        baseline = timed("plain client, batches of 500 (baseline)", n, plain_client)
        rate = timed("denoiseflow Recorder, record() + background send", n, sdk)
        print(f"  {'':<44} ratio to baseline: {rate / baseline:.2f}; "
              f"record() itself {record_seconds[0] / n * 1e6:.1f} µs per node; stats {recorder.stats()}")


if __name__ == "__main__":
    main()
