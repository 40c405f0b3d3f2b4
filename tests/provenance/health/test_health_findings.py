"""The health check finds exactly the planted faults, per project, and none of the traps."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.provenance.health.health_runs import run_check
from tests.support.events import fuse_event, node_event

pytestmark = pytest.mark.django_db


def after_grace():
    return (timezone.now() + timedelta(minutes=11)).isoformat()


def check(now=None):
    run_check(*(["--now", now] if now else []))


def findings(client, kind=None):
    body = client.get("/api/v1/health/latest", {"kind": kind} if kind else {}).json()
    return {(f["kind"], f["trace_id"], f["product_id"], f["detail"]) for f in body["findings"]}


ACME = [
    # A healthy chain whose middle feeds a node in another trace.
    node_event("q", "t-main"),
    node_event("r1", "t-main", parents=["q"], seconds=1),
    node_event("c1", "t-main", parents=["r1", "x2"], seconds=2),
    # Parents in another trace: neither broken nor orphans.
    node_event("x1", "t-cross", parents=["q"], seconds=3),
    node_event("x2", "t-cross", seconds=3),
    # A broken link, and an orphan.
    node_event("b1", "t-main", parents=["ghost"], seconds=4),
    node_event("o1", "t-main", seconds=5),
    # A one-node trace is no orphan.
    node_event("s1", "t-single", seconds=6),
    # A three-node cycle spanning two traces, fed from upstream and feeding a node downstream.
    node_event("ct-root", "t-cycle", seconds=7),
    node_event("cy1", "t-cycle", parents=["cy3"], seconds=8),
    node_event("cy2", "t-cycle", parents=["cy1"], seconds=9),
    node_event("cy3", "t-cycle-2", parents=["cy2", "ct-root"], seconds=10),
    node_event("down", "t-cycle-2", parents=["cy3"], seconds=11),
    # A self-loop.
    node_event("self", "t-main", parents=["self"], seconds=12),
    # Fused f1 consumed by u1 (a finding), by u2 which is downweighted and by u4 which is blocked (not);
    # u3 consumed dw, which is downweighted but not fused (not a finding).
    node_event("f1", "t-fuse", seconds=13),
    node_event("u1", "t-fuse", parents=["f1"], seconds=14),
    node_event("u2", "t-fuse", parents=["f1"], seconds=15, fuse={"decision": "downweight", "reason": "r"}),
    node_event("u4", "t-fuse", parents=["f1"], seconds=15, fuse={"decision": "block", "reason": "r"}),
    node_event("dw", "t-fuse", seconds=16),
    node_event("u3", "t-fuse", parents=["dw"], seconds=17),
    fuse_event("f1", "block", trace_id="t-fuse"),
    fuse_event("dw", "downweight", trace_id="t-fuse"),
]

# Same product ids, other faults: nothing may leak between projects.
GLOBEX = [
    node_event("ghost", "g-main"),  # acme's missing parent exists here: acme's link stays broken
    node_event("g2", "g-main", parents=["ghost"], seconds=1),
    node_event("b9", "g-main", parents=["q"], seconds=2),  # q exists only in acme: broken here
    node_event("f1", "g-main", seconds=3),  # not fused in globex
    node_event("u1", "g-main", parents=["f1"], seconds=4),
    node_event("cy1", "g-main", parents=["g2"], seconds=5),  # acme's cycle ids, acyclic here
    node_event("o1", "g-main", parents=["g2"], seconds=6),
]

ACME_FINDINGS = {
    ("broken_link", "t-main", "b1", "parent 'ghost' does not exist"),
    ("orphan", "t-main", "o1", "no parents and no consumers"),
    ("cycle", "t-cycle", "cy1", "on a parent cycle of 3 nodes"),
    ("cycle", "t-cycle", "cy2", "on a parent cycle of 3 nodes"),
    ("cycle", "t-cycle-2", "cy3", "on a parent cycle of 3 nodes"),
    ("cycle", "t-main", "self", "lists itself as a parent"),
    ("fused_indirect_use", "t-fuse", "u1", "consumed fused 'f1'"),
}
GLOBEX_FINDINGS = {("broken_link", "g-main", "b9", "parent 'q' does not exist")}


@pytest.fixture(params=["seeded-search", "tarjan-only", "trimmed-first", "trimming-cut-short"])
def cycle_strategy(request, monkeypatch):
    """Cycles come out the same whether the search starts from the links of
    the rarer direction, or SQL trims the graph first or not, and when
    trimming stops early."""
    from provenance.health import faults as dag_faults

    if request.param != "seeded-search":
        monkeypatch.setattr(dag_faults, "SEEDED_SEARCH_LIMIT", 0)
    if request.param not in ("seeded-search", "tarjan-only"):
        monkeypatch.setattr(dag_faults, "PYTHON_LINKS", 0)
    if request.param == "trimming-cut-short":
        monkeypatch.setattr(dag_faults, "MAX_TRIM_ROUNDS", 1)
    return request.param


def test_exactly_the_planted_faults_are_found_in_each_project(api, other_api, ingest, cycle_strategy):
    assert ingest(*ACME)["errors"] == []
    assert ingest(*GLOBEX, client=other_api)["errors"] == []
    check(after_grace())
    assert findings(api) == ACME_FINDINGS
    assert findings(other_api) == GLOBEX_FINDINGS
    report = api.get("/api/v1/health/latest").json()
    assert report["counts"] == {"broken_link": 1, "orphan": 1, "cycle": 4, "fused_indirect_use": 1,
                                "round_limit_exceeded": 0}
    assert report["finding_count"] == 7
    assert report["node_count"] == 20


def test_a_missing_parent_within_the_grace_period_is_not_broken(api, ingest):
    ingest(node_event("root", "t"), node_event("child", "t", parents=["root", "later"], seconds=1))
    check()
    assert findings(api, "broken_link") == set()
    check(after_grace())
    assert findings(api, "broken_link") == {("broken_link", "t", "child", "parent 'later' does not exist")}


def test_a_parent_that_arrived_late_mends_the_link(api, ingest):
    ingest(node_event("child", "t", parents=["late"], seconds=5), node_event("other", "t", parents=["child"]))
    check(after_grace())
    assert findings(api) == {("broken_link", "t", "child", "parent 'late' does not exist")}
    ingest(node_event("late", "t-elsewhere"))
    check(after_grace())
    assert findings(api) == set()


def test_replaying_the_clients_timeline_judges_age_by_event_time(api, ingest):
    """With --now before the events even reached the server, the child's own timestamp dates the link."""
    from tests.support.events import BASE_TIME

    ingest(node_event("child", "t", parents=["missing"], seconds=0), node_event("peer", "t", parents=["child"]))
    check((BASE_TIME + timedelta(minutes=5)).isoformat())
    assert findings(api, "broken_link") == set()
    check((BASE_TIME + timedelta(minutes=11)).isoformat())
    assert findings(api, "broken_link") == {("broken_link", "t", "child", "parent 'missing' does not exist")}


def test_a_node_with_several_fused_parents_is_one_finding(api, ingest):
    ingest(
        node_event("fa", "t", fuse={"decision": "block", "reason": "low"}),
        node_event("fb", "t", fuse={"decision": "block", "reason": "low"}),
        node_event("use", "t", parents=["fb", "fa"], seconds=1),
    )
    check()
    assert findings(api) == {("fused_indirect_use", "t", "use", "consumed fused 'fa', 'fb'")}


def test_a_long_ring_across_traces_reports_every_node_once(api, ingest, cycle_strategy):
    ring = 300
    events = [node_event(f"r{i}", f"t{i // 50}", parents=[f"r{(i + 1) % ring}"], seconds=i) for i in range(ring)]
    events.append(node_event("tail", "t0", parents=["r0"], seconds=ring))
    ingest(*events)
    check()
    found = findings(api)
    assert {f[2] for f in found} == {f"r{i}" for i in range(ring)}
    assert {f[0] for f in found} == {"cycle"}
    assert {f[3] for f in found} == {f"on a parent cycle of {ring} nodes"}


def test_every_run_is_kept(api, project, ingest):
    from provenance.models import HealthReport

    ingest(node_event("a", "t"), node_event("b", "t"))
    check()
    check()
    assert HealthReport.objects.filter(project=project).count() == 2
    assert api.get("/api/v1/health/latest").json()["finding_count"] == 2


def cycles_by_hand(parents: dict[str, list[str]]) -> dict[str, int]:
    """Each node on a parent cycle of two or more nodes, with the size of its
    group: the nodes it reaches that reach it back (a plain search per node)."""

    def reach(start):
        seen, stack = set(), list(parents[start])
        while stack:
            node = stack.pop()
            if node not in seen:
                seen.add(node)
                stack.extend(parents[node])
        return seen

    reached = {node: reach(node) for node in parents}
    groups = {node: {other for other in reached[node] if node in reached[other]} for node in parents}
    return {node: len(group) for node, group in groups.items() if node in group and len(group) > 1}


@pytest.mark.parametrize("clock", ["parents-older", "skewed"])
@pytest.mark.parametrize("arrival", ["parents-first", "children-first", "shuffled"])
@pytest.mark.parametrize("seed", [1, 2])
def test_random_graphs_have_exactly_the_cycles_a_plain_search_finds(api, ingest, cycle_strategy, arrival, clock,
                                                                    seed):
    """Whatever order nodes arrive in, and whatever their timestamps say (so
    however many links are out of time order), every strategy reports the
    groups a search by hand finds."""
    import random

    rng = random.Random(seed)
    names = [f"n{i}" for i in range(60)]
    # Links to earlier nodes; then a few from an upstream node to a later one close cycles.
    parents = {name: sorted({names[rng.randrange(i)] for _ in range(rng.randint(1, 2))} if i else set())
               for i, name in enumerate(names)}
    for _ in range(3):
        later = names[rng.randrange(10, 60)]
        upstream, stack = set(), list(parents[later])
        while stack:
            node = stack.pop()
            if node not in upstream:
                upstream.add(node)
                stack.extend(parents[node])
        closing = rng.choice(sorted(upstream))
        if later not in parents[closing]:
            parents[closing].append(later)
    seconds = [rng.randrange(60) if clock == "skewed" else i for i in range(60)]
    events = [node_event(name, f"t{i % 6}", parents=parents[name], seconds=seconds[i]) for i, name in enumerate(names)]
    if arrival == "children-first":
        events.reverse()
    elif arrival == "shuffled":
        rng.shuffle(events)
    for event in events:  # one at a time: the arrival order is the node id order
        assert ingest(event)["errors"] == []
    check(after_grace())

    expected = {("cycle", f"t{names.index(node) % 6}", node, f"on a parent cycle of {size} nodes")
                for node, size in cycles_by_hand(parents).items()}
    assert expected, "the graph should have a cycle"
    assert findings(api, "cycle") == expected
