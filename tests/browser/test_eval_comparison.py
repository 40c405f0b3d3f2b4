"""A person checks a release in Chromium: the demo's comparison of two prompts,
its fixed and broken cases side by side, and a broken case's trace with its DAG."""

import pytest

from demo import truth_sets
from tests.support.browser import screenshot, sign_in
from tests.support.evals import demo_runs

pytestmark = pytest.mark.browser

DAG_DRAWN = """() => { const gd = document.getElementById('dag');
  return !!(gd && gd._fullLayout && gd.data && gd.data.some((t) => (t.x || []).length > 0)); }"""


def test_the_demo_comparison_opens_a_broken_case_onto_its_dag(asgi_live_server, tenant, watched_page):
    _, key, _ = tenant
    newer, older = demo_runs(asgi_live_server, key)
    assert (newer["name"], older["name"]) == ("prompt-v2", "prompt-v1")
    assert newer["accuracy"] > older["accuracy"]

    page = watched_page
    sign_in(page, asgi_live_server)
    page.goto(f"{asgi_live_server.url}/p/acme/datasets/{truth_sets.DATASET}/runs/")
    page.wait_for_selector("#runs-chart[data-rendered=true]")
    page.click(f"tr[data-run='{newer['id']}'] >> text=Compare with previous")
    page.wait_for_url(f"**/runs/{newer['id']}/compare/**")

    fixed = page.locator("#fixed .case")
    broken = page.locator("#broken .case")
    assert fixed.count() >= 3 and broken.count() >= 2
    assert "intent-18" in page.locator("#broken").inner_text()
    screenshot(page, "eval-comparison.png")

    case = broken.first
    item_id = case.get_attribute("data-item")
    case.locator("a.trace-link").first.click()
    page.wait_for_url(f"**/traces/eval-{newer['id']}-{item_id}/**")
    page.wait_for_function(DAG_DRAWN)
    assert page.locator("#trace-title").inner_text() == f"eval-{newer['id']}-{item_id}"
    screenshot(page, "eval-broken-case-trace.png")
    assert page.problems == []
