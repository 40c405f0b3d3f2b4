"""A 5,000-node multi-agent run in Chromium at 1440×900: it opens folded and
readable, a cluster expands on click into a block beside its band (the rest
keeps its room, no two labels overlap at any zoom), focus mode keeps only the
ancestry, and "Why is this wrong?" on the final answer names the root cause
thousands of nodes upstream with the distance folded, marking only the path's
anomalous steps."""

import pytest

from demo.large_run import large_run_events
from tests.browser.plot import click_point, wait_until_settled
from tests.support.browser import screenshot, sign_in

pytestmark = pytest.mark.browser

DRAWN = """() => {
  const gd = document.getElementById("dag");
  const of = (name) => gd.data.find((t) => t.name === name) || {x: [], customdata: []};
  const clusters = of("clusters");
  return {
    markers: gd.data.filter((t) => t.name.startsWith("nodes")).reduce((n, t) => n + t.x.length, 0),
    clusters: clusters.x.map((x, k) => ({x: x, y: clusters.y[k], text: clusters.text[k]})),
    drawn: Number(gd.dataset.drawn),
  };
}"""

# Every label Plotly drew in the SVG (marks and column headers), as boxes on the screen.
LABEL_BOXES = """() => Array.from(document.querySelectorAll("#dag .textpoint text, #dag .xtick text"))
  .filter((t) => t.textContent.trim())
  .map((t) => { const r = t.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom, t.textContent]; })"""


def overlapping(boxes):
    pairs = []
    for k, a in enumerate(boxes):
        for b in boxes[k + 1:]:
            if a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1 and b[1] < a[3] - 1:
                pairs.append((a[4], b[4]))
    return pairs


# The plot's scale: screen pixels per column and per slot of the layout.
SCALE = """() => {
  const full = document.getElementById("dag")._fullLayout;
  return [full.xaxis.d2p(1) - full.xaxis.d2p(0), full.yaxis.d2p(0) - full.yaxis.d2p(1)];
}"""

# Where the given product ids are drawn on screen, and the plot area's box.
SCREEN_OF = """(ids) => {
  const gd = document.getElementById("dag"), box = gd.getBoundingClientRect();
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, wanted = new Set(ids), points = [];
  gd.data.filter((t) => t.name.startsWith("nodes")).forEach((t) => t.hovertext.forEach((h, i) => {
    if (wanted.has(h.split("</b>")[0].replace("<b>", ""))) {
      points.push([box.left + xa._offset + xa.d2p(t.x[i]), box.top + ya._offset + ya.d2p(t.y[i])]);
    }
  }));
  return {points: points, area: [box.left + xa._offset, box.top + ya._offset,
                                 box.left + xa._offset + xa._length, box.top + ya._offset + ya._length]};
}"""


def labels_fitted_after(page, count: int) -> list:
    """The drawn label boxes, once the page has fitted its labels again."""
    page.wait_for_function("(n) => Number(document.getElementById('dag').dataset.labelled || 0) > n", arg=count)
    wait_until_settled(page)
    return page.evaluate(LABEL_BOXES)


def labelled_count(page) -> int:
    return int(page.get_attribute("#dag", "data-labelled") or 0)


def drawn_after(page, count: int) -> None:
    page.wait_for_function("(n) => Number(document.getElementById('dag').dataset.drawn || 0) > n", arg=count)


def drawn_count(page) -> int:
    return int(page.get_attribute("#dag", "data-drawn") or 0)


@pytest.fixture
def big_run(asgi_live_server, tenant):
    _, key, _ = tenant
    events = large_run_events("run-5k", 5000)
    for start in range(0, len(events), 1000):
        asgi_live_server.ingest(key, *events[start:start + 1000])
    return events


def open_trace(page, server, query=""):
    page.set_viewport_size({"width": 1440, "height": 900})
    sign_in(page, server)
    page.goto(f"{server.url}/p/acme/traces/run-5k/{query}")
    page.wait_for_selector("#dag[data-drawn]")


def test_a_5000_node_run_opens_folded_and_readable(asgi_live_server, big_run, watched_page):
    page, server = watched_page, asgi_live_server
    open_trace(page, server)
    assert page.get_attribute("#dag", "data-folded") == "1"
    drawn = page.evaluate(DRAWN)
    assert 10 <= len(drawn["clusters"]) and drawn["markers"] + len(drawn["clusters"]) <= 150
    assert all(cluster["text"].startswith("×") for cluster in drawn["clusters"])
    # Anomalies are never folded away: the low-confidence fragment and every fused one are drawn.
    graph = page.evaluate("() => fetch(document.getElementById('trace-explorer').dataset.graphUrl).then((r) => r.json())")
    anomalous = {e["body"]["product_id"] for e in big_run if e["type"] == "node"
                 and e["body"].get("confidence", 1) < 0.5}
    assert anomalous <= set(graph["nodes"]["id"])
    assert sum(graph["clusters"]["count"]) + len(graph["nodes"]["id"]) == 5000
    assert overlapping(page.evaluate(LABEL_BOXES)) == []
    assert "4,990" not in page.locator(".graph-toolbar").inner_text()
    assert "5,000 nodes, folded into" in page.locator("#fold-note").inner_text()
    assert page.locator("#dag-minimap").is_visible()
    screenshot(page, "trace-large-folded.png")

    # A click on the biggest cluster (a 314-step reasoning chain) opens it
    # into a block beside its band, wrapped into rows.
    folded_scale = page.evaluate(SCALE)
    before, fitted = drawn_count(page), labelled_count(page)
    biggest = max(drawn["clusters"], key=lambda c: int(c["text"][1:].replace(",", "")))
    k = next(k for k, x in enumerate(graph["clusters"]["x"]) if (x, graph["clusters"]["y"][k]) == (biggest["x"], biggest["y"]))
    members = [graph["hidden"]["id"][j] for j, c in enumerate(graph["hidden"]["cluster"]) if c == k]
    assert len(members) == int(biggest["text"][1:].replace(",", ""))
    click_point(page, biggest["x"], biggest["y"])
    drawn_after(page, before)
    expanded = page.evaluate(DRAWN)
    assert expanded["markers"] == drawn["markers"] + len(members)
    assert biggest not in expanded["clusters"]
    assert page.locator("#unfold-reset").is_visible()
    # The rest keeps its room: columns and slots at least 60% as wide and tall as folded.
    scale = page.evaluate(SCALE)
    assert scale[0] >= 0.6 * folded_scale[0] and scale[1] >= 0.6 * folded_scale[1], (folded_scale, scale)
    # The opened chain is a block inside the plot, a fraction of its width.
    block = page.evaluate(SCREEN_OF, members)
    xs, ys = [p[0] for p in block["points"]], [p[1] for p in block["points"]]
    area = block["area"]
    assert len(xs) == len(members)
    assert area[0] <= min(xs) and max(xs) <= area[2] and area[1] <= min(ys) and max(ys) <= area[3]
    assert max(xs) - min(xs) <= 0.35 * (area[2] - area[0])

    # No two labels overlap: as drawn, zoomed in, zoomed further out than the drawing.
    page.mouse.move(area[2] - 4, area[3] - 4)  # no hover label in the screenshot
    boxes = labels_fitted_after(page, fitted)
    marks = [box for box in boxes if box[4].startswith("×")]
    assert len(marks) >= 0.85 * len(expanded["clusters"]) and overlapping(boxes) == []
    screenshot(page, "trace-large-expanded.png")
    centre = ((area[0] + area[2]) / 2, (area[1] + area[3]) / 2)
    for wheel in (-600, 1200, 1200):  # in, back out, then out beyond the drawing
        fitted = labelled_count(page)
        page.mouse.move(*centre)
        page.mouse.wheel(0, wheel)
        boxes = labels_fitted_after(page, fitted)
        assert boxes and overlapping(boxes) == [], wheel
        if wheel < 0:  # closer in, every cluster has room for its count
            assert len([box for box in boxes if box[4].startswith("×")]) == len(expanded["clusters"])
    # Zoomed far out, some labels make room for others.
    assert len([box for box in boxes if box[4].startswith("×")]) < len(expanded["clusters"])
    assert page.problems == []


# The page's own clock, from the click to the first frame after the answer is
# written: the figure the issue asks to stay under 1 s.
TIME_THE_ANSWER = """() => {
  const timing = window.whyTiming = {};
  const path = document.getElementById("np-cause-path");
  document.addEventListener("click", (event) => {
    if (event.target.closest("#why-wrong")) timing.clicked = performance.now();
  }, {capture: true});
  new MutationObserver(() => {
    if (path.textContent && timing.answered === undefined) {
      timing.answered = null;
      requestAnimationFrame(() => { timing.answered = performance.now(); });
    }
  }).observe(path, {childList: true, characterData: true, subtree: true});
}"""
# Generous beside the 1 s: CI is a loaded 2-core machine, and this is
# a correctness test; bench/trace_page.py measures the query itself.
ANSWER_BOUND_MS = 3000


def test_why_is_the_final_answer_wrong_on_5000_nodes(asgi_live_server, big_run, watched_page):
    page, server = watched_page, asgi_live_server
    open_trace(page, server, "?node=final")
    page.wait_for_function("() => document.getElementById('np-id').textContent === 'final'")
    page.evaluate(TIME_THE_ANSWER)
    page.click("#why-wrong")
    causes = page.locator("#np-cause-list")
    causes.locator("text=frag-c").wait_for()
    page.wait_for_function("() => typeof window.whyTiming.answered === 'number'")
    elapsed = page.evaluate("() => window.whyTiming.answered - window.whyTiming.clicked")
    print(f"'Why is this wrong?' on 5,000 nodes: answered {elapsed:.0f} ms after the click (issue: under 1 s)")
    assert 0 < elapsed < ANSWER_BOUND_MS
    assert "low confidence" in causes.inner_text()
    path = page.locator("#np-cause-path").text_content()
    # The anomalous steps with the folded distance between them, not 5,000 ids.
    assert path.startswith("path: frag-c → … ") and path.endswith(" → final")
    assert "reason-12-15" in path and " nodes … " in path
    assert len(path) < 400
    page.wait_for_function("() => document.getElementById('dag').data.some((t) => t.name === 'root-causes')")
    screenshot(page, "trace-large-root-cause.png")

    # Marked: the vertices holding the path's anomalous steps and the answer,
    # recomputed here from the events sent and the API's path and drawing.
    graph = page.evaluate("() => fetch(document.getElementById('trace-explorer').dataset.graphUrl)"
                          ".then((r) => r.json())")
    answer = page.evaluate("() => fetch(document.getElementById('trace-explorer').dataset.apiUrl"
                           " + '/nodes/final/root-cause').then((r) => r.json())")
    fused = {e["body"]["product_id"] for e in big_run if e["type"] == "fuse" and e["body"]["decision"] == "block"}
    sent = {e["body"]["product_id"]: e["body"] for e in big_run if e["type"] == "node"}
    anomalous = {pid for pid in answer["path"] if pid in fused or sent[pid].get("status") == "error"
                 or sent[pid].get("confidence", 1) < graph["threshold"]}
    assert {"frag-c", "reason-12-15"} <= anomalous and len(anomalous) < 10
    cluster_of = dict(zip(graph["hidden"]["id"], graph["hidden"]["cluster"]))
    nodes = graph["nodes"]
    position = {pid: (nodes["x"][i], nodes["y"][i]) for i, pid in enumerate(nodes["id"])}
    expected_clusters = {cluster_of[pid] for pid in anomalous | {"final"} if pid in cluster_of}
    expected = {position[pid] for pid in anomalous | {"final"} if pid in position}
    expected |= {(graph["clusters"]["x"][k], graph["clusters"]["y"][k]) for k in expected_clusters}
    marked = page.evaluate("""() => {
      const gd = document.getElementById("dag"), ring = gd.data.find((t) => t.name === "highlight-nodes");
      const clusters = gd.data.find((t) => t.name === "clusters");
      return {rings: ring.x.map((x, k) => [x, ring.y[k]]),
              clusters: clusters.marker.opacity.map((o, k) => o === 0.9 ? k : -1).filter((k) => k >= 0)};
    }""")
    assert {tuple(xy) for xy in marked["rings"]} == expected
    assert set(marked["clusters"]) == expected_clusters
    # The ordinary stretches of the path run through most clusters; none of those is painted.
    assert len({cluster_of[pid] for pid in answer["path"] if pid in cluster_of}) > len(graph["clusters"]["id"]) / 2
    assert page.problems == []


def test_focus_mode_shows_only_the_ancestry(asgi_live_server, big_run, watched_page):
    page, server = watched_page, asgi_live_server
    # A node folded inside a cluster: opening it reveals it.
    open_trace(page, server, "?node=reason-50-10")
    page.wait_for_function("() => document.getElementById('np-id').textContent === 'reason-50-10'")
    before = drawn_count(page)
    page.select_option("#focus-hops", "2")
    page.click("#focus-on")
    drawn_after(page, before)
    assert page.get_attribute("#dag", "data-focus") == "reason-50-10"
    ids = page.evaluate("() => document.getElementById('dag').data.filter((t) => t.name.startsWith('nodes'))"
                        ".flatMap((t) => t.hovertext.map((h) => h.split('</b>')[0].replace('<b>', '')))")
    assert sorted(ids) == sorted(f"reason-50-{j}" for j in (8, 9, 10, 11, 12))
    assert page.get_attribute("#dag", "data-clusters") == "0"

    # More hops, then all of them: still nothing but ancestors and consumers.
    before = drawn_count(page)
    page.select_option("#focus-hops", "all")
    drawn_after(page, before)
    graph = page.evaluate("() => fetch(document.getElementById('trace-explorer').dataset.graphUrl"
                          " + '?focus=reason-50-10&hops=all').then((r) => r.json())")
    everything = set(graph["nodes"]["id"]) | set(graph["hidden"]["id"])
    assert "reason-50-10" in everything and "final" in everything and "frag-c" in everything
    # Fragments fused in earlier rounds fed nothing that led here, and consumed nothing that came from here.
    fused_before = {f"frag-{r}-5" for r in (4, 13, 22, 31, 40, 49)}
    assert fused_before <= {e["body"]["product_id"] for e in big_run if e["type"] == "fuse"}
    assert not everything & fused_before
    assert len(everything) < 5000
    page.click("#focus-exit")
    page.wait_for_function("() => document.getElementById('dag').dataset.focus === ''")
    assert page.problems == []
