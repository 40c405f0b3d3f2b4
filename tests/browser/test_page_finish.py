"""What a new user sees around the charts and tables, in Chromium at 1440×900:
every label of every metrics chart inside its chart (long category names, a
right-hand axis, the legend never over the tick labels), a colour of its own
for each of many agents, the uncertainty page's heading flag agreeing with its
rows, tables and buttons in the product's style, a success message in green,
and example traces that stay inside the alert history's card.

One Chromium for the module, the session's live server; each test waits on a
page state (`data-state=ready`, a selector), never on time."""

from datetime import timedelta

import pytest
from django.utils import timezone

from alerts.models import AlertEvent, AlertRule
from metrics.rollups.refresh import refresh_rollups
from provenance.ingest.write import ingest_events
from tests.support.browser import signed_in


@pytest.fixture
def member_role():
    """These tests change things from the pages: an editor may."""
    return "editor"


pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AGENTS = [f"agent_with_a_rather_long_name_{i:02d}" for i in range(14)]

# Each drawn label (ticks, axis titles, legend entries) with its box, and the
# box of the chart it belongs to.
LABEL_BOXES = """() => Array.from(document.querySelectorAll(".js-plotly-plot")).map((chart) => {
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const texts = (selector) => Array.from(chart.querySelectorAll(selector))
    .filter((t) => t.textContent.trim() && t.getBoundingClientRect().width > 0)
    .map((t) => ({ text: t.textContent, box: box(t) }));
  return {
    id: chart.id, box: box(chart),
    ticks: texts(".xtick text, .ytick text, .x2tick text, .y2tick text"),
    titles: texts(".g-xtitle text, .g-ytitle text, .g-y2title text"),
    legend: texts(".legendtext"),
  };
})"""


def inside(inner, outer, slack=1.0) -> bool:
    return (inner[0] >= outer[0] - slack and inner[1] >= outer[1] - slack
            and inner[2] <= outer[2] + slack and inner[3] <= outer[3] + slack)


def overlap(a, b) -> bool:
    return a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1 and b[1] < a[3] - 1


@pytest.fixture
def many_agents(project):
    """Two days of nodes from 14 long-named agents, fused now and then, reviewed."""
    now = timezone.now()
    events = []
    for i in range(140):
        agent = AGENTS[i % len(AGENTS)]
        at = (now - timedelta(hours=2 + (i % 40))).isoformat()
        body = {"trace_id": f"m{i}", "product_id": f"m{i}-a", "agent_id": agent, "step": f"step_{i % 3}",
                "source_type": "retrieval", "confidence": round(0.05 + (i * 37 % 90) / 100, 2),
                "metrics": {"retrieval_similarity": (i % 5) / 5}}
        if i % 4 == 0:
            body["fuse"] = {"decision": "block", "reason": "similarity below the line", "threshold": 0.5}
        events.append({"id": f"ev-m{i}", "type": "node", "timestamp": at, "body": body})
        events.append({"id": f"ev-m{i}-b", "type": "node", "timestamp": at, "body": {
            "trace_id": f"m{i}", "product_id": f"m{i}-b", "agent_id": "answerer", "step": "answer",
            "source_type": "final_answer", "confidence": 0.8, "parent_ids": [f"m{i}-a"]}})
        events.append({"id": f"rv-m{i}", "type": "review", "timestamp": at,
                       "body": {"trace_id": f"m{i}", "verdict": "incorrect" if i % 3 else "correct"}})
    result = ingest_events(project, events)
    assert not result.errors
    refresh_rollups()


def open_metrics(page, live_server, path):
    page.goto(f"{live_server.url}/metrics/acme/{path}{'&' if '?' in path else '?'}range=7d")
    page.wait_for_selector("#metrics-root[data-state=ready]")
    page.wait_for_selector(".js-plotly-plot .xtick text")


@pytest.mark.parametrize("path", ["", "fuses/", "uncertainty/?by=agent_id", "calibration/", "drift/"])
def test_every_chart_label_is_inside_its_chart_and_clear_of_the_legend(live_server, page, member, many_agents,
                                                                         path):
    problems = signed_in(page, live_server, member)
    open_metrics(page, live_server, path)
    charts = page.evaluate(LABEL_BOXES)
    assert charts
    for chart in charts:
        for label in chart["ticks"] + chart["titles"] + chart["legend"]:
            assert inside(label["box"], chart["box"]), f"{chart['id']}: {label['text']!r} is cut off"
        for tick in chart["ticks"]:
            for entry in chart["legend"]:
                assert not overlap(tick["box"], entry["box"]), f"{chart['id']}: legend over {tick['text']!r}"
    assert any(chart["titles"] for chart in charts), "axis titles are drawn"
    assert problems == []


def test_every_line_of_fifteen_agents_gets_a_colour_of_its_own(live_server, page, member, many_agents):
    signed_in(page, live_server, member)
    open_metrics(page, live_server, "")
    colours = page.evaluate("""() => Array.from(document.querySelectorAll(
        "#chart-fuse-rate .legend .traces")).map((entry) => [
          entry.querySelector(".legendtext").textContent, entry.querySelector(".js-line").style.stroke])""")
    agents = [name for name, _ in colours]
    # The eight busiest agents by name, the other seven pooled into one line.
    assert len(agents) == 9 and set(agents[:8]) <= set(AGENTS) | {"answerer"} and agents[8] == "7 other agents"
    assert len({colour for _, colour in colours}) == len(colours), colours


def test_the_uncertainty_heading_flags_what_its_rows_flag(live_server, page, project, member):
    now = timezone.now().isoformat()
    # One step split in two (bimodal), one larger step around 0.8 that keeps the pooled shape unimodal.
    values = [("split", 0.12)] * 30 + [("split", 0.88)] * 30
    values += [("steady", 0.65 + (i % 11) / 50) for i in range(900)]
    events = [{"id": f"u{i}", "type": "node", "timestamp": now,
               "body": {"trace_id": f"u{i}", "product_id": f"u{i}", "agent_id": "a", "step": step, "confidence": c}}
              for i, (step, c) in enumerate(values)]
    assert not ingest_events(project, events).errors
    refresh_rollups()
    signed_in(page, live_server, member)
    open_metrics(page, live_server, "uncertainty/")
    section = page.locator("section.distribution[data-metric=confidence]")
    rows = {row.locator("td").first.inner_text(): row.locator(".flag").inner_text()
            for row in section.locator("tbody tr").all()}
    assert rows["split"] == "bimodal" and rows["steady"] == "unimodal" and rows["all"] == "unimodal"
    assert section.locator("h2 .flag").inner_text() == "bimodal"
    assert section.locator("h2 .flag-detail").inner_text() == "in 1 of 2 groups by step"
    # The table is the product's table: uppercase muted headers, ruled rows, on a card.
    header = section.locator("thead th").first
    assert header.evaluate("(th) => getComputedStyle(th).textTransform") == "uppercase"
    assert section.locator("tbody td").first.evaluate("(td) => getComputedStyle(td).borderBottomStyle") == "solid"
    assert section.locator("table").evaluate("(t) => t.parentElement.classList.contains('card')")
    # The filter form's Apply is the product's primary button, not a native one.
    apply = page.get_by_role("button", name="Apply")
    assert apply.evaluate("(b) => getComputedStyle(b).backgroundColor") == "rgb(59, 91, 219)"


def test_a_success_message_is_green(live_server, page, member):
    signed_in(page, live_server, member)
    page.goto(f"{live_server.url}/policy/acme/")
    page.click("#save-policy")
    message = page.locator(".messages li", has_text="Saved as version")
    message.wait_for()
    assert message.evaluate("(li) => getComputedStyle(li).backgroundColor") == "rgb(231, 245, 236)"


def test_example_traces_stay_inside_the_alert_history_card(live_server, page, project, member):
    rule = AlertRule.objects.create(project=project, name="A rule whose name goes on for quite a while, as some do",
                                    conditions=[{"metric": "fuse_rate", "op": ">", "threshold": 0.2}])
    ids = [f"ticket-2026120{i}-{'x' * 30}-{i}" for i in range(5)] + ["t-" + "y" * 120]
    AlertEvent.objects.create(project=project, rule=rule, state="firing", at=timezone.now(),
                              values=[{"metric": "fuse_rate", "value": 0.43}], window_start=timezone.now(),
                              example_trace_ids=ids)
    problems = signed_in(page, live_server, member)
    page.goto(f"{live_server.url}/alerts/acme/history/")
    card = page.locator(".table-card").bounding_box()
    links = page.locator("a.trace-link")
    assert links.count() == len(ids)
    for link in links.all():
        box = link.bounding_box()
        assert card["x"] <= box["x"] and box["x"] + box["width"] <= card["x"] + card["width"] + 0.5, link.inner_text()
    assert problems == []
