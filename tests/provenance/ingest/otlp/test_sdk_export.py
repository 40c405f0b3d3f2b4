"""Spans exported by the real OpenTelemetry SDK (OTLP/HTTP protobuf) become nodes:
ids in hex, parents from the parent span and from links, the denoise attributes
as node fields, ERROR status as a failed step."""

from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import Link, Status, StatusCode

from tests.denoiseflow.dashboard import nodes_of
from tests.provenance.ingest.otlp.spans import exporter_to, finished_spans


def hexes(span) -> tuple[str, str]:
    context = span.get_span_context()
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


def traced_ticket(tracer):
    """A small ticket workflow: a blocked retrieval fragment that reasoning
    consumes through a span link, and a verification step that fails."""
    with tracer.start_as_current_span("handle_ticket") as root:
        with tracer.start_as_current_span(
            "retrieval",
            attributes={
                "denoise.agent_id": "retrieval_agent_v2",
                "denoise.source_type": "retrieval",
                "denoise.confidence": 0.42,
                "denoise.round": 1,
                "denoise.fuse.decision": "block",
                "denoise.fuse.reason": "similarity 0.42 below 0.5",
                "retrieval.index": "kb-2024",
            },
        ) as fragment:
            pass
        with tracer.start_as_current_span(
            "reasoning",
            links=[Link(fragment.get_span_context())],
            attributes={"gen_ai.agent.name": "reasoning_agent", "denoise.step": "draft_conclusion",
                        "denoise.confidence": 0.71},
        ) as conclusion:
            pass
        with tracer.start_as_current_span("verification", attributes={"denoise.confidence": 0.9}) as check:
            check.set_status(Status(StatusCode.ERROR, "verifier timed out"))
    return {name: hexes(span) for name, span in
            [("root", root), ("fragment", fragment), ("conclusion", conclusion), ("check", check)]}


def test_exported_spans_become_nodes_with_parents_links_fuses_and_statuses(otel_tracer, api):
    ids = traced_ticket(otel_tracer())
    trace_hex, root = ids["root"]
    nodes = nodes_of(api, trace_hex)

    assert set(nodes) == {span for _, span in ids.values()}
    fragment, conclusion, check = nodes[ids["fragment"][1]], nodes[ids["conclusion"][1]], nodes[ids["check"][1]]
    assert nodes[root]["agent_id"] == "ticket-service"  # the resource's service.name
    assert nodes[root]["step"] == "handle_ticket"  # the span name
    assert nodes[root]["parent_ids"] == []

    assert fragment["agent_id"] == "retrieval_agent_v2"
    assert fragment["source_type"] == "retrieval"
    assert fragment["confidence"] == 0.42 and fragment["round"] == 1
    assert fragment["fused"] is True
    assert fragment["parent_ids"] == [root]

    assert conclusion["agent_id"] == "reasoning_agent"  # gen_ai.agent.name
    assert conclusion["step"] == "draft_conclusion"
    assert conclusion["parent_ids"] == [root, ids["fragment"][1]]  # the link is an extra parent

    assert check["status"] == "error" and fragment["status"] == "ok"


def test_a_fused_fragment_reached_through_a_link_is_the_root_cause(otel_tracer, api):
    ids = traced_ticket(otel_tracer())
    trace_hex, conclusion = ids["conclusion"]
    response = api.get(f"/api/v1/traces/{trace_hex}/nodes/{conclusion}/root-cause")
    assert response.json()["root_causes"][0]["product_id"] == ids["fragment"][1]
    assert response.json()["root_causes"][0]["reason"] == "fused"


def test_span_details_are_kept_on_the_node(otel_tracer, api):
    ids = traced_ticket(otel_tracer())
    trace_hex, fragment = ids["fragment"]
    node = api.get(f"/api/v1/traces/{trace_hex}/nodes/{fragment}").json()
    assert node["metadata"]["retrieval.index"] == "kb-2024"
    assert node["metadata"]["otel"]["kind"] == "SPAN_KIND_INTERNAL"
    assert node["metadata"]["otel"]["resource"]["service.name"] == "ticket-service"
    assert node["fuses"][0]["decision"] == "block"
    assert node["fuses"][0]["reason"] == "similarity 0.42 below 0.5"
    assert "denoise.confidence" not in node["metadata"]


def test_gzip_compressed_exports_are_accepted(otel_tracer, api):
    tracer = otel_tracer(compression=Compression.Gzip)
    with tracer.start_as_current_span("summary", attributes={"denoise.confidence": 0.8}) as span:
        pass
    trace_hex, span_hex = hexes(span)
    assert nodes_of(api, trace_hex)[span_hex]["confidence"] == 0.8


def test_an_export_resent_by_the_sdk_stores_nothing_twice(api, live_server, project_and_key):
    spans = finished_spans()
    exporter = exporter_to(live_server, project_and_key[1])
    assert exporter.export(spans) == SpanExportResult.SUCCESS
    assert exporter.export(spans) == SpanExportResult.SUCCESS
    trace_hex = format(spans[0].context.trace_id, "032x")
    assert api.get(f"/api/v1/traces/{trace_hex}").json()["node_count"] == 1
