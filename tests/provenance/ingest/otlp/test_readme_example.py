"""The README's plain-OpenTelemetry example runs as printed and the dashboard
reads its spans as a provenance DAG."""

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor


def test_the_readme_opentelemetry_example(live_server, project_and_key, api):
    endpoint, key = f"{live_server.url}/v1/traces", project_and_key[1]
    # --- README example, verbatim from here (endpoint and key filled in) ---
    provider = TracerProvider(resource=Resource.create({"service.name": "support-bot"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(
        endpoint=endpoint, headers={"Authorization": f"Bearer {key}"})))
    tracer = provider.get_tracer("support")
    with tracer.start_as_current_span("handle_ticket"):
        with tracer.start_as_current_span("retrieval", attributes={
                "denoise.confidence": 0.42, "denoise.source_type": "retrieval",
                "denoise.fuse.decision": "block", "denoise.fuse.reason": "similarity below 0.5"}) as fragment:
            pass
        with tracer.start_as_current_span("answer", links=[trace.Link(fragment.get_span_context())],
                                          attributes={"denoise.source_type": "final_answer"}):
            pass
    provider.shutdown()
    # --- end of the README example ---

    trace_hex = format(fragment.get_span_context().trace_id, "032x")
    nodes = {n["step"]: n for n in api.get(f"/api/v1/traces/{trace_hex}").json()["nodes"]}
    assert nodes["retrieval"]["fused"] and nodes["retrieval"]["agent_id"] == "support-bot"
    answer = nodes["answer"]["product_id"]
    cause = api.get(f"/api/v1/traces/{trace_hex}/nodes/{answer}/root-cause").json()
    assert [c["product_id"] for c in cause["root_causes"]] == [nodes["retrieval"]["product_id"]]
