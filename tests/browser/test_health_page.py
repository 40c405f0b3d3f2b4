"""The health page in Chromium: the trend chart draws under the strict CSP."""

import pytest

from tests.provenance.health.health_runs import run_check
from tests.support.browser import signed_in
from tests.support.events import node_event

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_trend_chart_draws_and_findings_open_their_node(live_server, page, member, ingest):
    ingest(node_event("a", "t"), node_event("b", "t"), node_event("loop", "t2", parents=["loop"]))
    run_check()
    problems = signed_in(page, live_server, member)
    page.on("response", lambda response: problems.append(response.url) if response.status >= 400 else None)

    page.goto(f"{live_server.url}/p/acme/health/")
    page.wait_for_selector("#health-trend[data-rendered='true'] .main-svg")
    assert page.locator("#health-trend .bars path").count() >= 2
    orphans = page.locator("#kind-orphan tbody tr.health-group")
    assert orphans.count() == 1  # one (agent, step): both nodes are the same agent's
    assert orphans.locator("ul.examples li").count() == 2
    legend = page.locator("#health-trend .legendtext").all_text_contents()
    assert sorted(legend) == ["Broken link", "Cycle", "Fused indirect use", "Orphan", "Round limit exceeded"]
    assert problems == []

    page.locator("#kind-cycle a", has_text="loop").click()
    page.wait_for_url("**/p/acme/traces/t2/?node=loop")
