"""The Cost & latency page in Chromium: its figures are the raw rows' (the
page's own cards and tables, recomputed here), untrusted names stay text,
and unpriced models link to where prices are set."""

from datetime import timedelta

import pytest
from django.utils import timezone

from metrics.rollups.refresh import refresh_rollups
from provenance.ingest.write import ingest_events
from provenance.models import Node
from tests.support.browser import signed_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HOSTILE_STEP = "<img src=x onerror=alert(1)>"


@pytest.fixture
def priced_traffic(project):
    now = timezone.now()
    events = []
    for t in range(20):
        for n, (step, model, duration) in enumerate([("retrieval", "", 300.0 + t), (HOSTILE_STEP, "gpt-4o", 2000.0 + t),
                                                     ("summary", "mystery-model", 50.0)]):
            body = {"trace_id": f"t{t}", "product_id": f"t{t}-{n}", "agent_id": "agent", "step": step,
                    "confidence": 0.7, "duration_ms": duration}
            if model:
                body["model"] = model
                body["usage"] = {"input_tokens": 1000, "output_tokens": 100}
                if model == "gpt-4o":
                    body["cost_usd"] = 0.01
            events.append({"id": f"e{t}-{n}", "type": "node", "timestamp": (now - timedelta(hours=2, minutes=t)).isoformat(),
                           "body": body})
    ingest_events(project, events)
    refresh_rollups()


def card(page, name: str) -> str:
    return page.locator(f"#cost-totals .metric-card:has(.name:text-is('{name}')) .value").text_content()


def test_cost_page_shows_the_raw_rows_figures(live_server, page, member, project, priced_traffic):
    problems = signed_in(page, live_server, member)
    page.goto(f"{live_server.url}/metrics/acme/cost/?range=24h")
    page.wait_for_selector("#metrics-root[data-state=ready]", timeout=15000)
    assert page.locator(".js-plotly-plot").count() == 4
    nodes = Node.objects.filter(project=project)
    durations = sorted(nodes.values_list("duration_ms", flat=True))
    assert card(page, "Nodes timed") == str(len(durations))
    # A percentile is within 1% of the nearest-rank value (metrics.stats.summary).
    shown = float(card(page, "p95 latency").removesuffix(" ms").replace(",", ""))
    assert shown == pytest.approx(durations[-(-95 * len(durations) // 100) - 1], rel=0.01)
    assert card(page, "Tokens") == f"{40 * 1100:,}"
    assert card(page, "Cost") == "$0.2000"
    slowest = page.locator("#slowest-steps tbody tr").first.locator("td")
    assert slowest.nth(0).text_content() == HOSTILE_STEP  # text, never markup
    hostile = sorted(d for d in durations if d >= 2000)
    assert float(slowest.nth(3).text_content().replace(",", "")) == pytest.approx(hostile[-(-95 * 20 // 100) - 1],
                                                                                 rel=0.01)
    expensive = page.locator("#expensive-steps tbody tr").first.locator("td")
    assert [expensive.nth(i).text_content() for i in range(3)] == [HOSTILE_STEP, "20", "$0.2000"]
    assert page.locator("#unpriced-models tbody tr td").all_text_contents() == ["mystery-model", "20"]
    assert page.locator("#set-prices").get_attribute("href") == "/p/acme/settings/"
    assert page.locator("img").count() == 0
    assert problems == []


def test_fuse_rates_page_shows_what_certainty_costs(live_server, page, member, project):
    from tests.metrics.test_certainty_costs import version_traffic
    from tests.support.events import BASE_TIME

    ingest_events(project, version_traffic())
    problems = signed_in(page, live_server, member)
    start, end = BASE_TIME.strftime("%Y-%m-%dT%H:%M:%S"), (BASE_TIME + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S")
    page.goto(f"{live_server.url}/metrics/acme/fuses/?start={start}&end={end}")
    page.wait_for_selector("#certainty[data-state=ready]", timeout=15000)
    rows = [row.locator("td").all_text_contents() for row in page.locator("#certainty tbody tr").all()]
    assert [row[0] for row in rows] == ["v1", "v2"]
    # v2 retried what it fused and cross-checked once: 71.6% of its cost on that path, every reviewed answer correct.
    assert rows[1][1:6] == ["5", "71.6%", "35.4%", "100.0%", "31.3%"]
    assert rows[0][9] == "$0.0240" and rows[1][7] == "550"
    assert problems == []
