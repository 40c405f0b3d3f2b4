"""A person investigates a bad answer in Chromium: from the bad answers list to
the DAG, the fused fragment, its root cause, and nodes that arrive live."""

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.plot import SCREEN_POSITION, click_point
from tests.browser.traces import bad_answer_trace, open_bad_answer_trace
from tests.support.browser import screenshot, sign_in
from tests.support.events import node_event

pytestmark = pytest.mark.browser

# The graph as Plotly holds it: trace name -> points, each with its node index.
POINTS = """() => {
  const gd = document.getElementById("dag");
  const out = {};
  (gd.data || []).forEach((trace) => {
    out[trace.name] = (trace.x || []).map((x, k) => ({
      x: x, y: trace.y[k], index: trace.customdata ? trace.customdata[k] : null,
      symbol: trace.marker && Array.isArray(trace.marker.symbol) ? trace.marker.symbol[k] : trace.marker && trace.marker.symbol,
      color: trace.marker && Array.isArray(trace.marker.color) ? trace.marker.color[k] : trace.marker && trace.marker.color,
      lineWidth: trace.marker && trace.marker.line && Array.isArray(trace.marker.line.width) ? trace.marker.line.width[k] : null,
    }));
    if (trace.marker && trace.marker.colorscale) out.colorscale = trace.marker.colorscale;
  });
  return out;
}"""


def graph_ready(page):
    page.wait_for_function("() => { const gd = document.getElementById('dag');"
                           " return gd && gd.data && gd.data.some((t) => t.name === 'nodes'); }")


POINT_OF = """(index) => {
  for (const trace of document.getElementById("dag").data) {
    if (!trace.name.startsWith("nodes")) continue;
    const k = trace.customdata.indexOf(index);
    if (k >= 0) return {x: trace.x[k], y: trace.y[k], symbol: trace.marker.symbol[k], color: trace.marker.color[k]};
  }
  return null;
}"""


def node_point(page, graph_ids: list[str], product_id: str) -> dict:
    point = page.evaluate(POINT_OF, graph_ids.index(product_id))
    assert point, f"{product_id} is not drawn"
    return point


LANDED_ON = """([x, y]) => {
  const under = document.elementFromPoint(x, y);
  return {panel: document.getElementById("np-id").textContent, settled: document.getElementById("dag").dataset.settled,
          element: under && under.tagName + "." + under.getAttribute("class")};
}"""


def click_node(page, graph_ids, product_id):
    point = node_point(page, graph_ids, product_id)
    click_point(page, point["x"], point["y"])
    try:
        page.wait_for_function("(id) => document.getElementById('np-id').textContent === id", arg=product_id)
    except PlaywrightTimeout as missed:
        # Say where the click landed, so that a miss under load can be told apart from a slow panel.
        where = page.evaluate(SCREEN_POSITION, [point["x"], point["y"]])
        seen = page.evaluate(LANDED_ON, where)
        raise AssertionError(f"clicking {product_id} at {where} selected nothing: {seen}") from missed


def drawn_ids(page) -> list[str]:
    return page.evaluate(
        "() => fetch(document.getElementById('trace-explorer').dataset.graphUrl).then((r) => r.json())"
        ".then((g) => g.nodes.id)"
    )


def test_investigating_a_bad_answer(asgi_live_server, tenant, watched_page):
    page, server = watched_page, asgi_live_server
    _, key, _ = tenant
    server.ingest(key, *bad_answer_trace("ticket-4711"))
    server.ingest(key, node_event("other-final", "fine-trace", seconds=30, confidence=0.95, source_type="final_answer"))

    sign_in(page, server)
    page.click("nav >> text=Bad answers")
    row = page.locator("#bad-answers tbody tr")
    assert row.count() == 1
    assert "reviewed incorrect" in row.inner_text()
    row.locator("text=Investigate").click()
    page.wait_for_url("**/p/acme/traces/ticket-4711/?analyze=final")  # Investigate opens the analysis since 828220f
    graph_ready(page)
    page.wait_for_selector("#live-status.on")
    ids = drawn_ids(page)

    # The fused fragment: its confidence color on the one scale, and the fused mark.
    fused = node_point(page, ids, "frag-bad")
    assert fused["symbol"] == "x"
    assert fused["color"] == 0.45
    points = page.evaluate(POINTS)
    assert points["colorscale"][0] == [0, "#d73027"]
    assert node_point(page, ids, "frag-ok")["symbol"] == "circle"
    # The final answer is selected when the page opens.
    assert page.locator("#np-id").text_content() == "final"

    click_node(page, ids, "frag-bad")
    panel = page.locator("#node-panel")
    assert "✕ fused" in panel.locator("#np-badges").inner_text()
    assert panel.locator("#np-content").text_content() == "Sydney is the capital."
    assert panel.locator("#np-raw").text_content() == "query: capital"
    assert "retrieval_similarity" in panel.locator("#np-metrics").inner_text()
    assert "similarity 0.45 below 0.6" in panel.locator("#np-fuses").inner_text()
    assert panel.locator("#np-children").inner_text().startswith("concl")

    click_node(page, ids, "final")
    page.click("#why-wrong")
    causes = page.locator("#np-cause-list")
    causes.locator("text=frag-bad").wait_for()
    assert "fused — a consumer blocked it" in causes.inner_text()
    assert "similarity 0.45 below 0.6" in causes.inner_text()
    assert page.locator("#np-cause-path").text_content() == "path: frag-bad → concl → check → final"
    page.wait_for_function("() => document.getElementById('dag').data.some((t) => t.name === 'root-causes')")
    highlighted = page.evaluate(POINTS)
    [ring] = highlighted["root-causes"]
    assert (ring["x"], ring["y"]) == (fused["x"], fused["y"])
    assert len(highlighted["highlight-edges"]) == 3 * 3  # three edges, drawn as x, x, gap
    screenshot(page, "trace-page.png")

    page.click("#what-broke")
    page.locator("#np-impact-summary").wait_for()
    assert page.locator("#np-impact-summary").text_content() == "Nothing consumed it, directly or transitively."

    # A node arrives while the page is open: it is drawn without a reload.
    server.ingest(key, node_event("follow-up", "ticket-4711", parents=["final"], seconds=6, agent_id="auditor",
                                  confidence=0.2))
    page.wait_for_function("() => document.getElementById('stat-nodes').textContent === '7'")
    page.locator("#toast", has_text="1 new node arrived").wait_for()
    ids = drawn_ids(page)
    # The header follows the message itself; the graph follows once its refresh is drawn.
    page.wait_for_function("(i) => (" + POINT_OF + ")(i) !== null", arg=ids.index("follow-up"))
    assert node_point(page, ids, "follow-up")["color"] == 0.2
    assert page.evaluate(POINTS)["fresh"], "the new node is ringed for a moment"
    assert page.problems == []


def test_the_trace_list_gains_new_traces_live(asgi_live_server, tenant, watched_page):
    page, server = watched_page, asgi_live_server
    _, key, _ = tenant
    server.ingest(key, *bad_answer_trace("ticket-4711"))
    for i, confidence in enumerate([0.92, 0.31, 0.77, None, 0.58, 0.12]):
        extra = {} if confidence is None else {"confidence": confidence}
        server.ingest(key, node_event(f"run-{i}-a", f"run-{i:03d}", seconds=60 * i, agent_id="retriever", **extra),
                      node_event(f"run-{i}-b", f"run-{i:03d}", parents=[f"run-{i}-a"], seconds=60 * i + 1,
                                 agent_id="answerer", source_type="final_answer", confidence=0.8))

    sign_in(page, server)
    page.wait_for_selector("#live-status.on")
    rows = page.locator("#trace-table tbody tr")
    assert rows.count() == 7

    server.ingest(key, node_event("late", "brand-new-trace", seconds=900, confidence=0.4, agent_id="retriever"))
    page.locator("#trace-table tbody tr[data-trace-id='brand-new-trace']").wait_for()
    first = rows.first
    assert first.get_attribute("data-trace-id") == "brand-new-trace"
    assert "0.40" in first.inner_text()
    assert rows.count() == 8
    first.locator("a").click()
    page.wait_for_url("**/p/acme/traces/brand-new-trace/")
    page.go_back()
    # Never a stale copy from the cache: the page comes back with the new trace in it.
    page.wait_for_selector("#trace-table tbody tr[data-trace-id='brand-new-trace']")
    page.click("nav >> text=Bad answers")
    page.wait_for_selector("#bad-answers")
    assert page.problems == []


def test_a_filtered_list_offers_a_refresh_instead(asgi_live_server, tenant, watched_page):
    page, server = watched_page, asgi_live_server
    _, key, _ = tenant
    server.ingest(key, *bad_answer_trace("ticket-4711"))
    sign_in(page, server)
    page.check("text=Fused only")
    page.click("text=Apply")
    page.wait_for_url("**fused=on**")
    page.wait_for_selector("#live-status.on")
    server.ingest(key, node_event("late", "brand-new-trace", seconds=900))
    page.locator("#live-notice", has_text="1 trace has new activity").wait_for()
    assert page.locator("#trace-table tbody tr").count() == 1
    assert page.problems == []


def test_clicking_from_node_to_node_selects_each_in_turn(asgi_live_server, tenant, watched_page):
    # Back and forth, as fast as the panel follows: each click lands on its own node, not the previous one.
    page, server = watched_page, asgi_live_server
    _, key, _ = tenant
    open_bad_answer_trace(page, server, key, "ticket-4711")
    graph_ready(page)
    ids = drawn_ids(page)
    for _ in range(5):
        for product_id in ("frag-bad", "final"):
            click_node(page, ids, product_id)
    assert page.problems == []
