"""OTLP fixtures: the real OpenTelemetry SDK exporting to a live server, and a
plain HTTP client for hand-written bodies."""

import pytest
from django.test import Client
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor


@pytest.fixture
def otel_tracer(live_server, project_and_key):
    """A tracer whose spans are exported over OTLP/HTTP protobuf to /v1/traces as
    each one ends, the way an instrumented agent would send them."""
    providers = []

    def make(service: str = "ticket-service", key: str | None = None, compression=Compression.NoCompression):
        exporter = OTLPSpanExporter(
            endpoint=f"{live_server.url}/v1/traces",
            headers={"Authorization": f"Bearer {key or project_and_key[1]}"},
            compression=compression,
            timeout=10,
        )
        provider = TracerProvider(resource=Resource.create({"service.name": service}))
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        providers.append(provider)
        return provider.get_tracer("tests.otlp")

    yield make
    for provider in providers:
        provider.shutdown()


@pytest.fixture
def otlp_post(project_and_key):
    """Posts a raw body to /v1/traces with the project's key (or `key`)."""

    def post(body: bytes, content_type: str = "application/json", key: str | None = None, **headers):
        client = Client()
        if key is None:
            key = project_and_key[1]
        if key:
            headers["HTTP_AUTHORIZATION"] = f"Bearer {key}"
        return client.post("/v1/traces", data=body, content_type=content_type, **headers)

    return post


def hex_id(value: int, length: int) -> str:
    return format(value, f"0{length * 2}x")
