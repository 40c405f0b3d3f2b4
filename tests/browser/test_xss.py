"""Agent-supplied text is shown as text: an XSS corpus in ids, agent names,
steps, content, metrics, fuse reasons and review comments executes nothing on
any explorer page, and reads back literally."""

import pytest

from tests.support.browser import sign_in
from tests.support.events import fuse_event, node_event, review_event

pytestmark = pytest.mark.browser

FLAG = "window.__xss"
CORPUS = [
    "<script>window.__xss=1</script>",
    '<img src=x onerror="window.__xss=1">',
    "<svg onload=window.__xss=1>",
    "javascript:window.__xss=1",
    '"><script>window.__xss=1</script>',
    "'><img src=x onerror=window.__xss=1>",
    '<a href="javascript:window.__xss=1">click me</a>',
    "<b onmouseover=window.__xss=1>bold</b>",
    '<iframe srcdoc="<script>parent.__xss=1</script>"></iframe>',
    "</pre><script>alert(1)</script>",
    "&lt;script&gt;alert(1)&lt;/script&gt; {{7*7}} ${7*7}",
]
TRACE = CORPUS[1]  # the trace id itself is hostile


def hostile_trace() -> list[dict]:
    events = [node_event("root", TRACE, agent_id=CORPUS[0], step=CORPUS[2], source_type=CORPUS[3],
                         content=CORPUS[0], raw_input=CORPUS[6], confidence=0.2,
                         metrics={CORPUS[7]: 0.2, "note": CORPUS[8]}, metadata={"x": CORPUS[9]})]
    for i, payload in enumerate(CORPUS):
        # Hostile product ids, agents and steps, each consuming the previous node and a parent that never arrives.
        events.append(node_event(payload, TRACE, parents=["root" if i == 0 else CORPUS[i - 1], "javascript:alert(1)"],
                                 seconds=i + 1, agent_id=payload, step=payload, content=payload, raw_input=payload,
                                 confidence=0.3 if i % 2 else None, source_type="final_answer" if i == len(CORPUS) - 1 else "",
                                 event_id=f"ev-{i}"))
    events.append(fuse_event(CORPUS[4], trace_id=TRACE, reason=CORPUS[5], by_agent_id=CORPUS[6], event_id="fuse-x"))
    review = review_event(TRACE, "incorrect", event_id="review-x")
    review["body"]["comment"] = CORPUS[10]
    events.append(review)
    return events


def assert_nothing_ran(page):
    assert page.evaluate(f"typeof {FLAG}") == "undefined"
    assert page.evaluate("typeof window.parent.__xss") == "undefined"
    assert page.problems == [], page.problems


def test_an_xss_corpus_executes_nothing_and_reads_as_text(asgi_live_server, tenant, watched_page):
    page, server = watched_page, asgi_live_server
    _, key, _ = tenant
    server.ingest(key, *hostile_trace())
    sign_in(page, server)

    row = page.locator("#trace-table tbody tr").first
    assert row.get_attribute("data-trace-id") == TRACE
    assert row.locator("a").text_content() == TRACE
    assert page.locator("#trace-table img, #trace-table script, #trace-table svg").count() == 0
    page.fill("#id_q", CORPUS[0])
    page.click("text=Apply")
    page.wait_for_url("**q=**")
    assert page.locator("#trace-table tbody tr").count() == 1
    assert_nothing_ran(page)

    page.click("nav >> text=Bad answers")
    page.wait_for_selector("#bad-answers")
    assert page.locator("#bad-answers tbody tr td.mono").first.text_content() == TRACE
    page.locator("#bad-answers >> text=Investigate").click()
    page.wait_for_function("() => document.getElementById('np-id').textContent.length > 0")
    assert page.locator("#trace-title").text_content() == TRACE
    assert page.locator("#np-id").text_content() == CORPUS[-1]
    assert page.locator("#np-content").text_content() == CORPUS[-1]
    assert page.locator("#np-reviews").inner_text().strip().endswith(CORPUS[10])

    # Walk the whole chain through the panel's parent links, reading each node back.
    for payload in reversed(CORPUS[:-1]):
        page.locator("#np-parents a.node-link", has_text=payload).first.click()
        page.wait_for_function("(id) => document.getElementById('np-id').textContent === id", arg=payload)
        assert page.locator("#np-content").text_content() == payload
        assert page.locator("#np-raw").text_content() == payload
        facts = page.locator("#np-facts").inner_text()
        assert payload in facts
    page.locator("#np-parents a.node-link", has_text="root").click()
    page.wait_for_function("() => document.getElementById('np-id').textContent === 'root'")
    assert CORPUS[7] in page.locator("#np-metrics").inner_text()
    assert CORPUS[9] in page.locator("#np-metadata").text_content()
    # A parent id like `javascript:…` never becomes a link target.
    page.locator("#np-children a.node-link", has_text=CORPUS[0]).click()
    page.wait_for_function("(id) => document.getElementById('np-id').textContent === id", arg=CORPUS[0])
    assert page.locator("#np-parents a.node-link", has_text="javascript:alert(1)").count() == 1
    assert page.evaluate("() => Array.from(document.querySelectorAll('a'))"
                         ".filter((a) => a.protocol !== 'http:').length") == 0

    page.click("#what-broke")
    page.locator("#np-impact-list li").first.wait_for()
    assert CORPUS[4] in page.locator("#np-impact-list").inner_text()
    page.locator("#np-children a.node-link", has_text=CORPUS[1]).click()
    page.locator("#np-children a.node-link", has_text=CORPUS[2]).click()
    page.locator("#np-children a.node-link", has_text=CORPUS[3]).click()
    page.locator("#np-children a.node-link", has_text=CORPUS[4]).click()
    page.wait_for_function("(id) => document.getElementById('np-id').textContent === id", arg=CORPUS[4])
    assert CORPUS[5] in page.locator("#np-fuses").inner_text()
    assert CORPUS[6] in page.locator("#np-fuses").inner_text()
    page.click("#why-wrong")
    page.locator("#np-cause-list li").first.wait_for()

    # Hover every drawn node: Plotly's labels show the text, never markup.
    boxes = page.evaluate("""() => {
      const gd = document.getElementById("dag");
      const box = gd.getBoundingClientRect(), xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
      return gd.data.filter((t) => t.name.startsWith("nodes") || t.name === "external")
        .flatMap((t) => t.x.map((x, k) => [box.left + xa._offset + xa.d2p(x), box.top + ya._offset + ya.d2p(t.y[k])]));
    }""")
    labels = []
    for x, y in boxes:
        page.mouse.move(x, y)
        page.wait_for_timeout(60)
        labels.append(page.evaluate("() => Array.from(document.querySelectorAll('.hoverlayer text'))"
                                    ".map((t) => t.textContent).join(' ')"))
    assert any(CORPUS[1] in label for label in labels)
    assert page.locator("#dag img, #dag script, #dag iframe, #dag a[href^='javascript']").count() == 0
    assert page.locator("#node-panel img, #node-panel script, #node-panel iframe, #node-panel b").count() == 0
    assert_nothing_ran(page)
