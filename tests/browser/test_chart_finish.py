"""The finish of every chart, on a project with sixteen agents, as Chromium
draws it: each tick label of each numeric axis (secondary axes too) is a
multiple of one step of 1, 2 or 5 × 10^k; no legend names more than the
eight busiest groups and one "others"; in the reliability diagram no bar is
painted over the accuracy line's markers or its n= labels."""

import math
import re
from decimal import Decimal

import pytest
from django.utils import timezone

from metrics.dashboards.legend import LEGEND_SERIES
from metrics.rollups.refresh import refresh_rollups
from provenance.ingest.write import ingest_events
from tests.metrics.traffic import many_agents_events
from tests.provenance.health.health_runs import run_check
from tests.support.browser import signed_in
from tests.support.evals import number_items

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Every page that draws a chart, and what says its charts are drawn.
METRICS_READY = "#metrics-root[data-state=ready] .js-plotly-plot .main-svg"
PAGES = [
    ("/metrics/acme/?range=7d", METRICS_READY),
    ("/metrics/acme/fuses/?range=7d", METRICS_READY),
    ("/metrics/acme/uncertainty/?range=7d&by=agent_id", METRICS_READY),
    ("/metrics/acme/drift/?range=7d", METRICS_READY),
    ("/metrics/acme/calibration/?range=7d", METRICS_READY),
    ("/metrics/acme/cost/?range=7d", METRICS_READY),
    ("/p/acme/health/", "#health-trend[data-rendered='true'] .main-svg"),
    ("/p/acme/why/?range=7d", "#why-trend[data-drawn='1'] .main-svg"),
    ("/p/acme/datasets/sums/runs/", "#runs-chart[data-rendered=true] .main-svg"),
]

# Per chart: each shown axis's type and drawn tick labels, and the legend's entries.
DRAWN = """() => Array.from(document.querySelectorAll(".js-plotly-plot")).map((gd) => ({
  id: gd.id,
  axes: Object.keys(gd._fullLayout).filter((k) => /^[xy]axis\\d*$/.test(k) && gd._fullLayout[k].visible !== false)
    .map((k) => { const axis = gd._fullLayout[k]; return { id: axis._id, type: axis.type,
      ticks: Array.from(gd.querySelectorAll("." + axis._id + "tick text")).map((t) => t.textContent) }; }),
  legend: gd.querySelectorAll(".legend .traces").length,
}))"""

SI = {"k": 3, "M": 6, "G": 9, "µ": -6, "m": -3}


def tick_value(text: str) -> Decimal:
    """A drawn tick label as a number: "20%" is 0.2, "1.5k" 1500, "−1" −1."""
    text = text.strip().replace("\u2212", "-").replace(",", "")
    scale = 0
    if text.endswith("%"):
        text, scale = text[:-1], -2
    elif text and text[-1] in SI:
        text, scale = text[:-1], SI[text[-1]]
    return Decimal(text).scaleb(scale)


def is_nice(step: Decimal) -> bool:
    mantissa = step.scaleb(-math.floor(math.log10(step)))
    return mantissa.normalize() in (Decimal(1), Decimal(2), Decimal(5))


@pytest.fixture
def sixteen_agents(project, api):
    """Two days of traces by sixteen agents (fused, timed, priced, reviewed), a
    health check's findings, and two evaluation runs of a truth set."""
    result = ingest_events(project, many_agents_events(timezone.now()))
    assert not result.errors
    refresh_rollups()
    run_check()
    assert api.post("/api/v1/datasets", {"name": "sums"}, format="json").status_code == 201
    assert api.post("/api/v1/datasets/sums/items", {"items": number_items(6)}, format="json").status_code == 200
    for name, right in (("prompt-v1", 3), ("prompt-v2", 5)):
        run = api.post("/api/v1/runs", {"dataset": "sums", "name": name}, format="json").json()
        results = [{"item_id": f"q-{i}", "actual": i * 10 if i <= right else 0, "escalated": i == 6}
                   for i in range(1, 7)]
        assert api.post(f"/api/v1/runs/{run['id']}/results", {"results": results}, format="json").status_code == 207
        assert api.post(f"/api/v1/runs/{run['id']}/finish").status_code == 200


def test_every_axis_has_nice_ticks_and_every_legend_is_capped(live_server, page, member, sixteen_agents):
    problems = signed_in(page, live_server, member)
    checked = 0
    for path, ready in PAGES:
        page.goto(live_server.url + path)
        page.wait_for_selector(ready)
        page.wait_for_selector(".js-plotly-plot .ytick text")
        for chart in page.evaluate(DRAWN):
            assert chart["legend"] <= LEGEND_SERIES + 1, f"{path} {chart['id']}: {chart['legend']} legend entries"
            for axis in chart["axes"]:
                if axis["type"] != "linear" or not axis["ticks"]:
                    continue  # dates and categories
                where = f"{path} {chart['id']} {axis['id']}: {axis['ticks']}"
                values = [tick_value(text) for text in axis["ticks"]]
                steps = {b - a for a, b in zip(values, values[1:])}
                assert len(steps) <= 1, f"{where} are not evenly spaced"
                if steps:
                    step = steps.pop()
                    assert step > 0 and is_nice(step), f"{where} step by {step}"
                    assert all((v / step) == (v / step).to_integral_value() for v in values), where
                checked += 1
    # Overview's fuse rate per agent names eight agents and "9 other agents".
    page.goto(live_server.url + PAGES[0][0])
    page.wait_for_selector(METRICS_READY)
    legend = page.locator("#chart-fuse-rate .legendtext").all_text_contents()
    assert len(legend) == LEGEND_SERIES + 1 and legend[-1] == "9 other agents", legend
    assert checked >= 20
    assert problems == []


# The accuracy line's markers and n= labels, and the bars: their boxes and
# which of each overlapping pair is painted later (SVG paints in document order).
RELIABILITY = """() => {
  const gd = document.getElementById("chart-reliability");
  const line = Array.from(gd.querySelectorAll(".scatterlayer .trace"))
    .find((t) => t.__data__ && t.__data__[0].trace.name === "observed accuracy");
  const box = (el) => el.getBoundingClientRect();
  const overlap = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 &&
    b.top < a.bottom - 0.5;
  const marks = Array.from(line.querySelectorAll(".points path.point"))
    .concat(Array.from(line.querySelectorAll(".textpoint text")).filter((t) => t.textContent));
  const bars = Array.from(gd.querySelectorAll(".barlayer .bars path")).filter((b) => box(b).height > 0);
  const covered = [], overlapped = [];
  marks.forEach((mark) => bars.forEach((bar) => {
    if (!overlap(box(mark), box(bar))) return;
    overlapped.push(mark.textContent);
    if (mark.compareDocumentPosition(bar) & Node.DOCUMENT_POSITION_FOLLOWING) covered.push(mark.textContent || "marker");
  }));
  const labels = Array.from(line.querySelectorAll(".textpoint text")).filter((t) => t.textContent).map(box);
  const clashing = labels.filter((a, i) => labels.some((b, j) => j !== i && overlap(a, b))).length;
  return { markers: line.querySelectorAll(".points path.point").length,
           labels: labels.length, bars: bars.length,
           overlapped: overlapped.length, covered: covered, clashing: clashing };
}"""


def test_the_reliability_diagram_keeps_its_line_and_counts_above_the_bars(live_server, page, member, sixteen_agents):
    problems = signed_in(page, live_server, member)
    page.goto(f"{live_server.url}/metrics/acme/calibration/?range=7d")
    page.wait_for_selector("#chart-reliability .textpoint text")
    found = page.evaluate(RELIABILITY)
    assert found["markers"] >= 5 and found["labels"] == found["markers"] and found["bars"] >= 5, found
    assert found["overlapped"] > 0, "bars and marks share places: the test measures something"
    assert found["covered"] == [], found
    assert found["clashing"] == 0, found
    texts = page.locator("#chart-reliability .textpoint text").all_text_contents()
    assert all(re.fullmatch(r"n=\d+", t) for t in texts if t), texts
    assert problems == []
