"""Nodes are named by what made them: the node panel and the escalation inbox
title a node agent · step first and its id second, the inbox names the trace's
question, and Bad answers lists the answer's text (two lines, the whole of it on
hover), never clipped sideways."""

import pytest

from tests.policy.test_inbox import escalation_event
from tests.support.browser import sign_in
from tests.support.events import node_event, review_event

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

QUESTION = "Where is my refund for order 1182?"
ANSWER = ("Your refund for order 1182 was issued on 4 March and reaches your card within 14 days; "
          "the bank may take two more days to show it, and a second order placed the same day is refunded "
          "separately once its return is scanned at our warehouse in Leeds.")
CLIPPED_SIDEWAYS = "(el) => el.scrollWidth > el.clientWidth + 1"


def ticket(server, key, *, reviewed: bool = True):
    """A support ticket whose retrieval was escalated; a review of the trace (which Bad answers
    needs) closes the escalation."""
    server.ingest(
        key,
        node_event("ticket-7:gateway:1-a1b2c3", "ticket-7", agent_id="gateway", source_type="user_input",
                   content=QUESTION),
        node_event("ticket-7:retrieval:1-a1b2c3", "ticket-7", agent_id="retrieval_agent_v2", step="retrieval",
                   parents=["ticket-7:gateway:1-a1b2c3"], confidence=0.2, seconds=1),
        node_event("ticket-7:final_answer:1-a1b2c3", "ticket-7", agent_id="responder", step="final_answer",
                   source_type="final_answer", parents=["ticket-7:retrieval:1-a1b2c3"], content=ANSWER,
                   confidence=0.3, seconds=2),
        escalation_event("ticket-7:retrieval:1-a1b2c3", "ticket-7"))
    if reviewed:
        server.ingest(key, review_event("ticket-7", "incorrect"))


def test_the_node_panel_names_agent_and_step_before_the_id(asgi_live_server, tenant, watched_page):
    page, server = watched_page, asgi_live_server
    ticket(server, tenant[1])
    sign_in(page, server)
    page.goto(f"{server.url}/p/acme/traces/ticket-7/?node=ticket-7:retrieval:1-a1b2c3")
    page.wait_for_function("() => document.getElementById('np-id').textContent === 'ticket-7:retrieval:1-a1b2c3'")
    title, node_id = page.locator("#np-title"), page.locator("#np-id")
    assert title.text_content() == "retrieval_agent_v2 · retrieval"
    assert title.bounding_box()["y"] < node_id.bounding_box()["y"]
    assert page.problems == []


def test_the_inbox_names_the_step_and_the_question(asgi_live_server, tenant, watched_page):
    page, server = watched_page, asgi_live_server
    ticket(server, tenant[1], reviewed=False)
    sign_in(page, server)
    page.goto(f"{server.url}/policy/acme/inbox/")
    entry = page.locator("li.escalation").first
    heading = entry.locator("header > div").first
    assert heading.locator(".node-name").inner_text() == "retrieval_agent_v2 · retrieval"
    assert heading.locator("code.product").inner_text() == "ticket-7:retrieval:1-a1b2c3"
    assert heading.locator(".node-name").bounding_box()["x"] < heading.locator("code.product").bounding_box()["x"]
    assert heading.locator(".question").inner_text() == f"Question: {QUESTION}"
    assert page.problems == []


def test_bad_answers_show_the_answer_text_clamped_with_the_whole_on_hover(asgi_live_server, tenant, watched_page):
    page, server = watched_page, asgi_live_server
    ticket(server, tenant[1])
    sign_in(page, server)
    page.goto(f"{server.url}/p/acme/bad-answers/")
    cell = page.locator("#bad-answers tbody tr td.bad-answer-text .clamped")
    assert cell.get_attribute("title") == ANSWER
    assert cell.inner_text().startswith("Your refund for order 1182")
    # Two lines shown, the rest hidden below (never a sideways clip); the header says what the column is.
    box = cell.bounding_box()
    line = float(cell.evaluate("(el) => parseFloat(getComputedStyle(el).lineHeight)"))
    assert box["height"] <= 2 * line + 1 and cell.evaluate("(el) => el.scrollHeight > el.clientHeight")
    for element in page.locator("#bad-answers td, #bad-answers th").all():
        assert not element.evaluate(CLIPPED_SIDEWAYS), element.inner_text()
    assert "ticket-7:final_answer" not in page.locator("#bad-answers").inner_text()
    assert "responder · final_answer" in page.locator("#bad-answers tbody tr").first.inner_text()
    assert page.problems == []
