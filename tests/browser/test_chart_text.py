"""Agent text in charts stays text: `<a>`, `<b>` and `<img>` in agent ids,
steps and fuse reasons never become elements inside any chart, on any page
that draws one."""

from datetime import timedelta
from urllib.parse import quote

import pytest
from django.utils import timezone

from metrics.rollups.refresh import refresh_rollups
from provenance.ingest.write import ingest_events
from tests.support.browser import signed_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AGENT = '<a href="https://evil.example/" id="injected-a">agent</a>'
STEP = '<b style="color:red" id="injected-b">step</b>'
REASON = '<img src=x id="injected-img">reason'
# Metric names are agent text too: Uncertainty and Drift put them in axis titles.
METRIC = '<a href="https://evil.example/" id="injected-metric">x</a>'
STYLED_METRIC = '<span style="font-size:40px" id="injected-span">big</span>'

# Any element the payloads could become, inside any Plotly chart.
INJECTED = """() => document.querySelectorAll(
  ".js-plotly-plot a[href*='evil'], .js-plotly-plot #injected-a, .js-plotly-plot #injected-b," +
  " .js-plotly-plot img, .js-plotly-plot [id^=injected], .js-plotly-plot text [style*='font-size:40px']").length"""


@pytest.fixture
def hostile_traffic(project):
    now = timezone.now()
    events = []
    for i in range(30):
        at = (now - timedelta(hours=2, minutes=i)).isoformat()
        body = {"trace_id": f"h{i}", "product_id": f"h{i}-a", "agent_id": AGENT, "step": STEP,
                "source_type": "retrieval", "confidence": 0.1 + (i % 9) / 10,
                "metrics": {"retrieval_similarity": (i % 5) / 5, METRIC: (i % 4) / 4, STYLED_METRIC: (i % 3) / 3}}
        if i % 3 == 0:
            body["fuse"] = {"decision": "block", "reason": REASON, "threshold": 0.5}
        events.append({"id": f"ev-h{i}", "type": "node", "timestamp": at, "body": body})
        events.append({"id": f"ev-h{i}-b", "type": "node", "timestamp": at, "body": {
            "trace_id": f"h{i}", "product_id": f"h{i}-b", "agent_id": "answerer", "step": STEP,
            "source_type": "final_answer", "confidence": 0.8, "parent_ids": [f"h{i}-a"]}})
        events.append({"id": f"rv-h{i}", "type": "review", "timestamp": at,
                       "body": {"trace_id": f"h{i}", "verdict": "incorrect" if i % 2 else "correct"}})
    result = ingest_events(project, events)
    assert not result.errors
    refresh_rollups()


@pytest.mark.parametrize("path", ["", "fuses/", "uncertainty/?by=agent_id", "uncertainty/", "drift/",
                                  "drift/?metric=" + quote(METRIC), "calibration/"])
def test_agent_text_in_charts_stays_text(live_server, page, member, hostile_traffic, path):
    problems = signed_in(page, live_server, member)
    page.goto(f"{live_server.url}/metrics/acme/{path}{'&' if '?' in path else '?'}range=24h")
    page.wait_for_selector("#metrics-root[data-state=ready]")
    page.wait_for_selector(".js-plotly-plot")
    assert page.evaluate(INJECTED) == 0
    svg_text = page.evaluate("() => Array.from(document.querySelectorAll('.js-plotly-plot text'))"
                             ".map((t) => t.textContent).join('\\n')")
    if path in ("", "fuses/"):
        assert '<a href="https://evil.example/"' in svg_text, "the agent id reads literally"
    if path == "fuses/":
        assert "<img src=x" in svg_text, "the fuse reason reads literally"
    if path.startswith("uncertainty/"):
        assert METRIC in svg_text and STYLED_METRIC in svg_text, "metric names in axis titles read literally"
    assert problems == []
