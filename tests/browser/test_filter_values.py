"""Issue 27's story in Chromium: an agent filter takes a prefix of the ids the
project's data holds, case ignored, and a value that starts none says which
ids are closest instead of a bare "No traces match"."""

import pytest

from provenance.models import Node
from provenance.vocabulary import FUSED
from tests.support.browser import signed_in
from tests.support.events import node_event

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BLOCK = {"decision": "block", "reason": "below threshold"}


@pytest.fixture
def agents_traffic(ingest):
    events = []
    for i in range(12):
        agent = ("retrieval_agent_v1", "retrieval_agent_v2", "reasoner")[i % 3]
        # Every other trace has a fused node; in some the fused node is another agent's.
        fused_agent = agent if i % 4 == 0 else "verifier"
        events.append(node_event(f"p{i}-a", f"trace-{i:02}", agent_id=agent, confidence=0.8, seconds=i))
        events.append(node_event(f"p{i}-b", f"trace-{i:02}", agent_id=fused_agent, confidence=0.3, seconds=i + 0.5,
                                 parents=[f"p{i}-a"], **({"fuse": BLOCK} if i % 2 == 0 else {})))
    ingest(*events)


def expected_traces(project, agents) -> set[str]:
    """From the raw rows: traces with a node of one of `agents` and a fused node."""
    fused = set(Node.objects.filter(FUSED.q(), project=project).values_list("trace__trace_id", flat=True))
    of_agents = set(Node.objects.filter(project=project, agent_id__in=agents).values_list("trace__trace_id", flat=True))
    return of_agents & fused


def shown_traces(page) -> set[str]:
    return set(page.locator("#trace-table tbody tr").evaluate_all("rows => rows.map(r => r.dataset.traceId)"))


def test_a_typed_prefix_finds_the_traces_of_every_agent_it_starts(live_server, page, member, project, agents_traffic):
    signed_in(page, live_server, member)
    page.goto(f"{live_server.url}/p/acme/traces/")
    page.fill("input[name=agent]", "retrieval")
    page.check("input[name=fused]")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_selector("[data-filter=agent] [data-filter-matches]")
    expected = expected_traces(project, ["retrieval_agent_v1", "retrieval_agent_v2"])
    assert len(expected) == 4
    assert shown_traces(page) == expected
    assert page.locator("[data-filter=agent] [data-filter-matches]").text_content() == (
        "2 values: retrieval_agent_v1, retrieval_agent_v2")

    # Case ignored; an exact id still means only itself.
    page.fill("input[name=agent]", "RETRIEVAL_AGENT_V2")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_selector("[data-filter=agent] [data-filter-matches]:has-text('= retrieval_agent_v2')")
    assert shown_traces(page) == expected_traces(project, ["retrieval_agent_v2"])


def test_a_value_that_starts_no_agent_names_the_closest(live_server, page, member, project, agents_traffic):
    signed_in(page, live_server, member)
    page.goto(f"{live_server.url}/p/acme/traces/?agent=retreival")
    line = page.locator("#empty-state [data-unmatched=agent]")
    text = line.text_content()
    assert text.startswith("No agent in this project's data starts with “retreival” (case ignored). Closest: ")
    # The most alike first: both retrieval agents, not the reasoner.
    assert sorted(line.locator("code").all_text_contents()) == ["retrieval_agent_v1", "retrieval_agent_v2"]
    assert page.locator("#trace-table").is_hidden()
