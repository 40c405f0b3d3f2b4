"""Links that deliver: Bad answers' Investigate opens the trace with the root
cause shown (`?analyze=`) and lists the answer's text; a retry is drawn linked
to the attempt it retries."""

import re

import pytest

from tests.support.events import fuse_event, node_event, review_event

pytestmark = pytest.mark.django_db


def test_investigate_opens_the_trace_with_the_analysis_and_bad_answers_show_the_answer(member, ingest):
    ingest(node_event("frag", "t-bad", confidence=0.3), fuse_event("frag", trace_id="t-bad"),
           node_event("answer", "t-bad", parents=["frag"], seconds=1, source_type="final_answer", confidence=0.9,
                      content="Order A-1043 is not eligible <b>at all</b>"),
           review_event("t-bad", "incorrect", "answer"))
    html = member.get("/p/acme/bad-answers/").content.decode()
    row = re.search(r'<tr data-trace-id="t-bad">.*?</tr>', html, re.S).group(0)
    assert 'href="/p/acme/traces/t-bad/?analyze=answer">Investigate →' in row
    assert "Order A-1043 is not eligible &lt;b&gt;at all&lt;/b&gt;" in row
    page = member.get("/p/acme/traces/t-bad/?analyze=answer").content.decode()
    assert 'data-selected="answer"' in page and 'data-analyze="answer"' in page


def test_a_retry_is_drawn_linked_to_the_attempt_it_retries(member, ingest):
    ingest(node_event("q", "t"), node_event("a", "t", parents=["q"], confidence=0.2), fuse_event("a", trace_id="t"),
           node_event("a-2", "t", seconds=1, retry_of="a", attempt=2, confidence=0.9),
           node_event("answer", "t", parents=["a-2"], seconds=2))
    graph = member.get("/api/v1/traces/t/graph").json()
    ids = graph["nodes"]["id"]
    retries = graph["retries"]
    assert [(ids[retries[k]], ids[retries[k + 1]]) for k in range(0, len(retries), 2)] == [("a", "a-2")]
    # A retry link is not a parent edge.
    edges = graph["edges"]
    assert ("a", "a-2") not in {(ids[edges[k]], ids[edges[k + 1]]) for k in range(0, len(edges), 2)}
