"""Spans finished in memory, to hand to an exporter explicitly (resends, bad keys)."""

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def finished_spans(name: str = "step") -> list:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    with provider.get_tracer("tests.otlp").start_as_current_span(name):
        pass
    return list(memory.get_finished_spans())


def exporter_to(live_server, key: str) -> OTLPSpanExporter:
    return OTLPSpanExporter(endpoint=f"{live_server.url}/v1/traces", headers={"Authorization": f"Bearer {key}"})
