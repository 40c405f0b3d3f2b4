"""The health report as a person reads it: findings grouped by kind and by
(agent, step) with counts and a few examples, every group paged in full, each
kind with its own description; and a retry is never an orphan."""

import re

import pytest

from provenance.models import HealthFinding, Node
from tests.provenance.health.health_runs import run_check
from tests.support.events import node_event

pytestmark = pytest.mark.django_db


def orphans(agent_id, step, count, trace):
    """`count` nodes nobody links, in one trace with a linked pair so it has two or more nodes."""
    return [node_event(f"{trace}-{n:03d}", trace, agent_id=agent_id, step=step) for n in range(count)]


@pytest.fixture
def many(ingest):
    ingest(*orphans("retriever", "retrieval", 120, "r"))
    ingest(*orphans("summarizer", "summary", 5, "s"))
    ingest(node_event("loop", "c", agent_id="critic", step="verification", parents=["loop"]))
    run_check()


def test_a_retry_with_retry_of_and_no_parents_is_not_an_orphan_nor_the_attempt_it_retries(api, ingest):
    ingest(
        node_event("q", "t"), node_event("a", "t", parents=["q"]),
        # A retry of `a` recorded without parents: linked to `a` by retry_of.
        node_event("a-retry", "t", retry_of="a", attempt=2),
        # An attempt with no parents and no consumers, retried by a linked node.
        node_event("b", "t"), node_event("b-retry", "t", parents=["q"], retry_of="b", attempt=2),
        node_event("stray", "t"),
    )
    run_check()
    findings = api.get("/api/v1/health/latest").json()["findings"]
    assert [(f["kind"], f["product_id"]) for f in findings] == [("orphan", "stray")]


def test_findings_are_grouped_by_kind_and_by_agent_and_step_with_counts_and_examples(member, many):
    html = member.get("/p/acme/health/").content.decode()
    section = re.search(r'<section class="health-kind" id="kind-orphan".*?</section>', html, re.S).group(0)
    rows = re.findall(r'<tr class="health-group" data-agent="([^"]*)" data-step="([^"]*)">.*?'
                      r'<td class="num"><a href="([^"]+)">(\d+)</a>.*?<ul class="examples">(.*?)</ul>', section, re.S)
    # Recomputed from the stored findings themselves.
    stored = {}
    for agent_id, step in HealthFinding.objects.filter(kind="orphan").values_list("agent_id", "step"):
        stored[(agent_id, step)] = stored.get((agent_id, step), 0) + 1
    assert [((a, s), int(n)) for a, s, _, n, _ in rows] == sorted(stored.items(), key=lambda kv: -kv[1])
    assert stored == {("retriever", "retrieval"): 120, ("summarizer", "summary"): 5}
    assert [len(re.findall(r"<li>", examples)) for *_, examples in rows] == [3, 3]
    assert rows[0][2] == "/p/acme/health/?kind=orphan&amp;agent_id=retriever&amp;step=retrieval"
    assert "all 120 →" in section
    # The overview table counts each kind and its sources.
    summary = re.search(r'<table id="health-overview">.*?</table>', html, re.S).group(0)
    assert re.search(r'data-kind="orphan">.*?<td class="num">125</td><td class="num">2</td>', summary, re.S)
    assert re.search(r'data-kind="cycle">.*?<td class="num">1</td><td class="num">1</td>', summary, re.S)


def test_a_group_is_paged_in_full(member, many):
    base = "/p/acme/health/?kind=orphan&agent_id=retriever&step=retrieval"
    seen = []
    for page in (1, 2, 3):
        html = member.get(f"{base}&page={page}").content.decode()
        listing = re.search(r'<section class="health-listing".*?</section>', html, re.S).group(0)
        seen += re.findall(r'\?node=(r-\d+)"', listing)
        assert f"page {page} of 3" in listing
        assert ('rel="next"' in listing) == (page < 3) and ('rel="prev"' in listing) == (page > 1)
    expected = sorted(Node.objects.filter(agent_id="retriever").values_list("product_id", flat=True))
    assert seen == expected and len(seen) == 120
    assert "Findings 101–120 of 120" in member.get(f"{base}&page=3").content.decode()


def test_each_kind_carries_its_own_description(member, many):
    html = member.get("/p/acme/health/").content.decode()
    helps = dict(re.findall(r'id="kind-(\w+)" data-kind="\w+">\s*<h2>.*?</h2>\s*<p class="help">(.*?)</p>', html, re.S))
    assert set(helps) == {"broken_link", "orphan", "cycle", "fused_indirect_use", "round_limit_exceeded"}
    assert len(set(helps.values())) == 5
    assert "max_rounds" in helps["round_limit_exceeded"]
    assert "fused (blocked)" in helps["fused_indirect_use"]


def test_bad_paging_is_a_400_naming_the_field(member, many):
    for query, field in (("kind=nope", "kind"), ("kind=orphan&page=0", "page"), ("kind=orphan&page=x", "page"),
                         ("page=2", "page")):
        response = member.get(f"/p/acme/health/?{query}")
        assert response.status_code == 400, query
        assert f"{field}:" in response.content.decode()


def test_the_api_pages_and_groups_the_same_findings(api, many):
    whole = api.get("/api/v1/health/latest").json()
    assert len(whole["findings"]) == whole["finding_count"] == 126
    paged = api.get("/api/v1/health/latest?kind=orphan&agent_id=retriever&step=retrieval&offset=100&limit=50").json()
    assert paged["matching"] == 120
    assert [f["product_id"] for f in paged["findings"]] == [f"r-{n:03d}" for n in range(100, 120)]
    assert set(paged["findings"][0]) == {"kind", "trace_id", "product_id", "detail"}
    orphan = next(k for k in whole["groups"] if k["kind"] == "orphan")
    assert [(g["agent_id"], g["step"], g["count"]) for g in orphan["groups"]] == [
        ("retriever", "retrieval", 120), ("summarizer", "summary", 5)]
    assert [e["product_id"] for e in orphan["groups"][0]["examples"]] == ["r-000", "r-001", "r-002"]
    assert [k["kind"] for k in whole["groups"]] == ["broken_link", "orphan", "cycle", "fused_indirect_use",
                                                     "round_limit_exceeded"]
    assert api.get("/api/v1/health/latest?limit=0").status_code == 400
