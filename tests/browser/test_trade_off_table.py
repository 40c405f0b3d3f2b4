"""A person weighs a release in Chromium: the demo's two prompts compared,
the trade-off table shows what v2's accuracy cost, every figure recomputed
here from the runs' results and their traces' nodes."""

import math

import httpx
import pytest

from demo import step_costs
from provenance.costs import format_ms, format_usd
from tests.support.browser import screenshot, sign_in
from tests.support.evals import demo_runs

pytestmark = pytest.mark.browser


def recomputed(server, key, run):
    """A run's trade-off figures from its results and the trace API's nodes."""
    headers = {"Authorization": f"Bearer {key}"}
    summary = httpx.get(f"{server.url}/api/v1/runs/{run['id']}", headers=headers).json()
    traces = {r["trace_id"] for r in summary["results"] if r["trace_id"]}
    nodes = [n for t in traces for n in httpx.get(f"{server.url}/api/v1/traces/{t}", headers=headers).json()["nodes"]]
    cost = sum(n["cost_usd"] for n in nodes if n["cost_usd"] is not None)
    latencies = sorted(r["latency_ms"] for r in summary["results"] if r["latency_ms"] is not None)
    return {
        "accuracy": summary["passed"] / summary["total"],
        "fuse_rate": sum(n["fused"] for n in nodes) / len(nodes),
        "escalated": sum(r["escalated"] for r in summary["results"]),
        "p95_latency_ms": latencies[math.ceil(0.95 * len(latencies)) - 1],
        "cost_per_trace": cost / len(traces),
        "cost_per_passed": cost / summary["passed"],
    }


def test_the_trade_off_table_prices_what_the_newer_prompt_bought(asgi_live_server, tenant, watched_page):
    project, key, _ = tenant
    project.prices = step_costs.PRICES
    project.save(update_fields=["prices"])
    newer, older = demo_runs(asgi_live_server, key)
    after, before = recomputed(asgi_live_server, key, newer), recomputed(asgi_live_server, key, older)
    assert after["cost_per_trace"] > before["cost_per_trace"]  # the large model costs more per case

    page = watched_page
    sign_in(page, asgi_live_server)
    page.goto(f"{asgi_live_server.url}/p/acme/runs/{newer['id']}/compare/?to={older['id']}")
    page.wait_for_selector("#trade-off-table")

    def cells(figure):
        row = page.locator(f"#trade-off-table tr[data-figure='{figure}']")
        return row.locator("td.there").inner_text(), row.locator("td.here").inner_text(), row.get_attribute("class")

    there, here, _ = cells("accuracy")
    assert (there, here) == (f"{before['accuracy'] * 100:.1f}%", f"{after['accuracy'] * 100:.1f}%")
    assert cells("accuracy")[2] == "better"
    there, here, _ = cells("fuse_rate")
    assert (there, here) == (f"{before['fuse_rate'] * 100:.1f}%", f"{after['fuse_rate'] * 100:.1f}%")
    there, here, _ = cells("escalated")
    assert (there, here) == (str(before["escalated"]), str(after["escalated"]))
    there, here, klass = cells("cost_per_trace")
    assert (there, here) == (format_usd(before["cost_per_trace"]), format_usd(after["cost_per_trace"]))
    assert klass == "worse"
    there, here, _ = cells("cost_per_passed")
    assert (there, here) == (format_usd(before["cost_per_passed"]), format_usd(after["cost_per_passed"]))
    there, here, _ = cells("p95_latency_ms")
    assert (there, here) == (format_ms(before["p95_latency_ms"]), format_ms(after["p95_latency_ms"]))
    page.locator("#trade-off").scroll_into_view_if_needed()
    screenshot(page, "eval-trade-off.png")
    assert page.problems == []
