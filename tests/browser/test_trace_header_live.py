"""The trace page's header follows what arrives: min confidence, final answer
and last activity change with the websocket message itself, even when the
graph's refresh does not come through; and its column headers name the steps
the columns hold, each once."""

import pytest

from tests.browser.traces import open_bad_answer_trace
from tests.support.browser import sign_in
from tests.support.events import fuse_event, node_event, review_event

pytestmark = pytest.mark.browser


def test_the_header_follows_the_websocket_message(asgi_live_server, tenant, watched_page):
    page, server = watched_page, asgi_live_server
    _, key, _ = tenant
    open_bad_answer_trace(page, server, key, "ticket-9")
    page.wait_for_selector("#dag[data-settled='1']")
    page.wait_for_selector("#live-status.on")
    assert page.inner_text("#stat-min").strip() == "0.45"
    assert page.inner_text("#stat-final").strip() == "0.70"

    # From now on the graph cannot be fetched again: only the message can bring the figures.
    page.route("**/graph?*", lambda route: route.abort())
    server.ingest(key, node_event("second-final", "ticket-9", parents=["final"], seconds=3600, agent_id="answerer",
                                  source_type="final_answer", confidence=0.05))
    page.wait_for_function("() => document.getElementById('stat-nodes').textContent === '7'")
    assert page.inner_text("#stat-min").strip() == "0.05"
    assert page.inner_text("#stat-final").strip() == "0.05"
    assert page.inner_text("#stat-ended").strip() == "2026-11-20 10:00:00"


def test_column_headers_name_the_steps_once_each(asgi_live_server, tenant, watched_page):
    page, server = watched_page, asgi_live_server
    _, key, _ = tenant
    # Two reasoning columns with different steps, as entity extraction and intent detection are.
    server.ingest(key, node_event("q", "t-steps", source_type="user_input"),
                  node_event("e", "t-steps", parents=["q"], seconds=1, step="entity_extraction",
                             source_type="reasoning", confidence=0.9),
                  node_event("r", "t-steps", parents=["e"], seconds=2, step="retrieval", source_type="retrieval",
                             confidence=0.9),
                  node_event("c", "t-steps", parents=["r"], seconds=3, step="reasoning", source_type="reasoning",
                             confidence=0.9),
                  node_event("f", "t-steps", parents=["c"], seconds=4, step="answer", source_type="final_answer",
                             confidence=0.9))
    sign_in(page, server)
    page.goto(f"{server.url}/p/acme/traces/t-steps/")
    page.wait_for_selector("#dag[data-settled='1'] .xtick text")
    headers = page.eval_on_selector_all("#dag .xtick text", "(ts) => ts.map((t) => t.textContent)")
    assert headers == ["user_input", "entity_extraction", "retrieval", "reasoning", "answer"]
    assert page.problems == []


def test_a_review_and_a_fuse_of_shown_nodes_reach_the_open_header(asgi_live_server, tenant, watched_page):
    page, server = watched_page, asgi_live_server
    _, key, _ = tenant
    server.ingest(key, node_event("ask", "ticket-7", source_type="user_input"),
                  node_event("answer", "ticket-7", parents=["ask"], seconds=1, source_type="final_answer",
                             confidence=0.4))
    sign_in(page, server)
    page.goto(f"{server.url}/p/acme/traces/ticket-7/")
    page.wait_for_selector("#live-status.on")
    assert page.inner_text("#stat-verdict").strip() == "not reviewed"
    server.ingest(key, review_event("ticket-7", "incorrect", "answer"))
    page.wait_for_function("() => document.getElementById('stat-verdict').textContent.trim() === 'incorrect'")
    server.ingest(key, fuse_event("ask", trace_id="ticket-7"))
    page.wait_for_function("() => document.getElementById('stat-fused').textContent.trim() === '✕ 1'")
    assert page.problems == []
