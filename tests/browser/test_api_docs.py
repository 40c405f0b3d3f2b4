"""/api/v1/docs (Swagger UI from our own static files) and the browsable API
render in Chromium under our CSP, with no console or CSP error."""

import pytest

from tests.support.browser import signed_in
from tests.support.events import node_event

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_docs_page_renders_every_operation(live_server, page, member):
    problems = signed_in(page, live_server, member)
    response = page.goto(f"{live_server.url}/api/v1/docs")
    assert "'unsafe-eval'" not in response.headers["content-security-policy"]
    page.wait_for_selector(".swagger-ui .opblock", timeout=20000)
    text = page.locator(".swagger-ui").inner_text()
    for path in ("/api/v1/ingest", "/api/v1/traces/{trace_id}/nodes/{product_id}/root-cause", "/api/v1/alert-rules"):
        assert path in text
    assert "POST /v1/traces" in text  # the OTLP endpoint, described in words
    page.locator(".opblock-summary-path", has_text="/api/v1/ingest").first.click()
    page.wait_for_selector(".opblock.is-open .responses-table")
    assert "207" in page.locator(".opblock.is-open").inner_text()
    assert problems == []


def test_the_browsable_api_renders_a_trace_for_a_member(live_server, page, member, ingest):
    ingest(node_event("frag-1", "t-1", confidence=0.4), node_event("final", "t-1", parents=["frag-1"], seconds=1))
    problems = signed_in(page, live_server, member)
    page.goto(f"{live_server.url}/api/v1/traces/t-1")
    page.wait_for_selector(".response-info")
    assert "frag-1" in page.locator(".response-info").inner_text()
    assert problems == []
