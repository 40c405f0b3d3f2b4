"""In Chromium: Bad answers' Investigate opens the trace with the root cause
already shown, and "Why is this wrong?" leaves a link that opens the same
answer; a retry's dashed link to the attempt it retries is drawn."""

import pytest

from provenance.ingest.write import ingest_events
from tests.support.browser import screenshot, sign_in
from tests.support.events import fuse_event, node_event, review_event

pytestmark = pytest.mark.browser

RETRIES_DRAWN = ("() => { const gd = document.getElementById('dag');"
                 " return gd && gd.data && gd.data.some((t) => t.name === 'retries' && t.x.length === 3); }")


@pytest.fixture
def wrong(tenant):
    project = tenant[0]
    result = ingest_events(project, [
        node_event("q", "t-bad"), node_event("frag", "t-bad", parents=["q"], confidence=0.3),
        fuse_event("frag", trace_id="t-bad"),
        node_event("frag-2", "t-bad", parents=["q"], seconds=1, retry_of="frag", attempt=2, confidence=0.4),
        node_event("answer", "t-bad", parents=["frag", "frag-2"], seconds=2, source_type="final_answer",
                   confidence=0.9, content="not eligible for a refund"),
        review_event("t-bad", "incorrect", "answer")])
    assert result.errors == []


def test_investigate_opens_the_trace_with_the_root_cause_shown(asgi_live_server, wrong, watched_page):
    page, server = watched_page, asgi_live_server
    sign_in(page, server)
    page.goto(f"{server.url}/p/acme/bad-answers/")
    page.get_by_role("link", name="Investigate →").click()
    page.wait_for_url("**/p/acme/traces/t-bad/?analyze=answer")
    page.wait_for_selector("#trace-explorer[data-analyzed=cause]")
    assert "frag" in page.locator("#np-cause-list").inner_text()
    assert page.locator("#np-cause-path").text_content().startswith("path: frag")
    # The retry is drawn linked to the attempt it retries.
    page.wait_for_function(RETRIES_DRAWN)
    screenshot(page, "trace-analyze.png")
    assert page.problems == []


def test_why_is_this_wrong_leaves_a_link_to_share(asgi_live_server, wrong, watched_page):
    page, server = watched_page, asgi_live_server
    sign_in(page, server)
    page.goto(f"{server.url}/p/acme/traces/t-bad/?node=answer")
    page.wait_for_function(RETRIES_DRAWN)
    page.click("#why-wrong")
    page.wait_for_selector("#trace-explorer[data-analyzed=cause]")
    shared = page.url
    assert shared.endswith("/p/acme/traces/t-bad/?analyze=answer")
    page.goto(f"{server.url}/p/acme/traces/")
    page.goto(shared)
    page.wait_for_selector("#trace-explorer[data-analyzed=cause]")
    assert "frag" in page.locator("#np-cause-list").inner_text()
    assert page.problems == []
