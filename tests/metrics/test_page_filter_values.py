"""The metrics pages' agent, step, source type and model filters take a
prefix of the project's values, case ignored (core.filter_values): the figures
are those of every value it starts, recomputed here from the raw rows. The
API keeps exact values, as the contract says."""

import pytest

from metrics.rollups.refresh import refresh_rollups
from provenance.models import Node
from tests.support.events import node_event

WINDOW = "start=2026-11-20T00:00:00&end=2026-11-21T00:00:00"


@pytest.fixture
def steps_traffic(ingest):
    events = []
    for i in range(30):
        step = ("retrieval", "retrieval_rerank", "answer")[i % 3]
        # Traces hold two steps each, so a trace with both retrieval steps must be counted once.
        events.append(node_event(f"p{i}", f"t{i // 2}", step=step, confidence=0.2 + (i % 7) / 10, seconds=i * 600))
    ingest(*events)
    refresh_rollups()


def overview(member, query: str) -> dict:
    response = member.get(f"/metrics/acme/data/overview.json?{WINDOW}&{query}")
    assert response.status_code == 200, response.content
    return response.json()["headline"]["current"]


def test_a_step_prefix_counts_every_step_it_starts(member, project, steps_traffic):
    nodes = Node.objects.filter(project=project, step__in=["retrieval", "retrieval_rerank"])
    found = overview(member, "step=Retr")
    assert found["node_count"] == nodes.count() == 20
    assert found["trace_count"] == len(set(nodes.values_list("trace_id", flat=True)))
    # An exact value means only itself.
    assert overview(member, "step=retrieval")["node_count"] == Node.objects.filter(step="retrieval").count()


def test_the_page_says_what_a_prefix_became_or_what_is_closest(member, project, steps_traffic):
    html = member.get(f"/metrics/acme/?{WINDOW}&step=retr").content.decode()
    assert "2 values: retrieval, retrieval_rerank" in html
    html = member.get(f"/metrics/acme/?{WINDOW}&step=retreival").content.decode()
    assert "none starts with “retreival”; closest: retrieval" in html


def test_the_api_keeps_exact_values(api, project, steps_traffic):
    response = api.get(f"/api/v1/metrics/summary?metric=confidence&{WINDOW}&step=retr")
    assert response.status_code == 200
    assert response.json()["count"] == 0


@pytest.mark.parametrize("typed", ["\x00", "x" * 10_000, "重試🙂"])
def test_hostile_filter_values_get_a_clear_answer(member, project, steps_traffic, typed):
    for path in ("/metrics/acme/", "/metrics/acme/data/overview.json", "/p/acme/traces/", "/p/acme/why/"):
        field = "agent" if path.startswith("/p/acme/traces") else "agent_id"
        response = member.get(path, {field: typed, "model": typed} if "why" in path else {field: typed})
        assert response.status_code in (200, 400), (path, response.status_code)
        if response.status_code == 200 and "json" not in path:
            text = response.content.decode()
            assert any(clear in text for clear in ("none starts with", "at most 255 characters",
                                                   "no more than 255 characters")), path
