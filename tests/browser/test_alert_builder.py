"""The rule builder in Chromium: the filters offer the project's known values
(agents, steps, source types, rounds, models), a rate's threshold is a
percentage (and the builder asks when a share was probably meant as one), the
destination address says what it wants, and Remove is not clipped."""

import pytest

from alerts.models import AlertRule
from provenance.ingest.write import ingest_events
from tests.support.browser import signed_in
from tests.support.events import node_event


@pytest.fixture
def member_role():
    """These tests change things from the pages: an editor may."""
    return "editor"


pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_known_values_and_percent_thresholds(live_server, page, project, member):
    ingest_events(project, [
        node_event("a", "t1", agent_id="retriever", step="retrieval", source_type="retrieval", round=1,
                   model="gpt-4o-mini"),
        node_event("b", "t1", agent_id="reasoner", step="reasoning", source_type="reasoning", round=2,
                   model="claude-haiku"),
        node_event("c", "t1", agent_id="reasoner", step="reasoning", source_type="reasoning", round=2),
    ])
    problems = signed_in(page, live_server, member)
    page.goto(f"{live_server.url}/alerts/acme/new/")
    row = page.locator("tr.condition-row").nth(0)

    agents = page.locator("#known-agent_id option").evaluate_all("options => options.map(o => o.value)")
    steps = page.locator("#known-step option").evaluate_all("options => options.map(o => o.value)")
    rounds = page.locator("#known-round option").evaluate_all("options => options.map(o => o.value)")
    sources = page.locator("#known-source_type option").evaluate_all("options => options.map(o => o.value)")
    models = page.locator("#known-model option").evaluate_all("options => options.map(o => o.value)")
    assert (agents, steps, rounds, sources) == (["reasoner", "retriever"], ["reasoning", "retrieval"], ["1", "2"],
                                                ["reasoning", "retrieval"])
    assert models == ["claude-haiku", "gpt-4o-mini"]  # a node without a model names none
    assert row.locator("input[name=condition_agent_id]").get_attribute("list") == "known-agent_id"
    assert row.locator("input[name=condition_model]").get_attribute("list") == "known-model"

    page.fill("input[name=name]", "round two fuses")
    row.locator("select[name=condition_metric]").select_option("fuse_rate")
    threshold = row.locator("input[name=condition_threshold]")
    hint = row.locator("[data-threshold-hint]")
    assert row.locator("[data-unit]").inner_text() == "%"
    threshold.fill("0.2")
    assert "Did you mean 20%?" in hint.inner_text()
    hint.get_by_role("button", name="Use 20%").click()
    assert threshold.input_value() == "20"
    assert hint.inner_text() == "Fires when fuse_rate > 20% (a share of 0.2)."

    row.locator("select[name=condition_metric]").select_option("node_count")
    assert row.locator("[data-unit]").inner_text() == "" and hint.inner_text() == ""
    row.locator("select[name=condition_metric]").select_option("fuse_rate")
    row.locator("input[name=condition_round]").fill("2")
    row.locator("input[name=condition_model]").fill("claude-haiku")

    remove = row.get_by_role("button", name="Remove")
    clipped = remove.evaluate("b => b.scrollWidth > b.clientWidth + 1 || b.getBoundingClientRect().right > "
                              "b.closest('.table-card').getBoundingClientRect().right + 1")
    assert clipped is False and remove.inner_text() == "Remove"

    page.get_by_role("button", name="Add destination").click()
    destination = page.locator("tr.destination-row").nth(0)
    destination.locator("select[name=destination_type]").select_option("email")
    address = destination.locator("input[name=destination_address]")
    assert "@" in address.get_attribute("placeholder")
    address.fill("oncall@example.org")

    page.get_by_role("button", name="Create rule").click()
    page.wait_for_url("**/alerts/acme/*/")
    rule = AlertRule.objects.get(project=project)
    assert rule.conditions == [{"metric": "fuse_rate", "window": "15m", "filters": {"round": 2, "model": "claude-haiku"}, "op": ">",
                                "threshold": 0.2}]
    assert [(d.kind, d.config) for d in rule.destinations.all()] == [("email", {"to": ["oncall@example.org"]})]
    assert problems == []
