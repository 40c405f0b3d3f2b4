"""Faults planted in the demo for the DAG health check to find, one of each
kind: a parent that never arrives, a node nobody connects to, a cycle between
two agents, and a summary that consumed a fragment a consumer had fused.
Recorded like any agent's events, with fixed ids, so a re-run stores nothing twice.

`expected_findings` is the answer key: every finding the health check must
report on the demo, and nothing else (the demo's normal traffic honours its own
fuses and links every node). Two more parts of the story plant one each: the
policy story's runaway agent and the 5,000-node run both loop past the round
limit."""

from datetime import datetime, timedelta

from django.db.models import F

from demo import large_run, policy_story
from provenance.models import FindingKind, Node

TRACE = "demo-faulty-run"


def expected_findings(with_large_run: bool) -> set[tuple[str, str, str]]:
    """(kind, trace id, product id) of each finding planted in the demo; the
    5,000-node run is left out of quick loads (`--scale` below 0.5)."""
    found = {
        (FindingKind.BROKEN_LINK, TRACE, f"{TRACE}:fragment"),
        (FindingKind.ORPHAN, TRACE, f"{TRACE}:stray-note"),
        (FindingKind.FUSED_INDIRECT_USE, TRACE, f"{TRACE}:summary"),
        (FindingKind.CYCLE, TRACE, f"{TRACE}:critic"),
        (FindingKind.CYCLE, TRACE, f"{TRACE}:rewrite"),
        (FindingKind.ROUND_LIMIT_EXCEEDED, policy_story.RUNAWAY_TRACE, policy_story.runaway_last_node()),
    }
    if with_large_run:
        found.add((FindingKind.ROUND_LIMIT_EXCEEDED, large_run.DEMO_TRACE, large_run.highest_round_node()))
    return {(str(kind), trace, product) for kind, trace, product in found}


def plant(recorder, now: datetime) -> None:
    start = now - timedelta(hours=5)
    at = iter(start + timedelta(seconds=s) for s in range(100))

    def node(name, agent, parents=(), **fields):
        return recorder.record(TRACE, agent, fields.pop("content", f"{name} output"), parent_ids=list(parents),
                               product_id=f"{TRACE}:{name}", event_id=f"node:{TRACE}:{name}", timestamp=next(at),
                               **fields)

    question = node("input", "gateway", step="user_input", source_type="user_input",
                    content="Can I return an opened kettle?")
    # A parent id no node ever carries: the retriever cited a document that was never recorded.
    node("fragment", "retrieval_agent_v2", [question.product_id, f"{TRACE}:kb-fragment-404"], step="retrieval",
         source_type="retrieval", confidence=0.81)
    # A fragment fused by its consumer, and a summary that used it anyway.
    stale = node("stale-fact", "retrieval_agent_v2", [question.product_id], step="retrieval", source_type="retrieval",
                 confidence=0.38)
    recorder.fuse(stale, "block", "similarity 0.38 below 0.5", threshold=0.5, trace_id=TRACE,
                  by_agent_id="reasoning_agent", timestamp=next(at), event_id=f"fuse:{TRACE}:stale-fact")
    node("summary", "summarizer", [stale.product_id], step="summary", source_type="summary", confidence=0.7)
    # Two agents that each claim to have consumed the other: a cycle.
    node("critic", "verifier", [question.product_id, f"{TRACE}:rewrite"], step="verification", confidence=0.6)
    node("rewrite", "reasoning_agent", [f"{TRACE}:critic"], step="reasoning", confidence=0.62)
    # A note nobody consumed and that consumed nothing.
    node("stray-note", "summarizer", step="summary", confidence=0.9)


def settle(project) -> None:
    """Dates the planted nodes' arrival to their own timestamps, hours ago.

    The health check gives a missing parent a grace period from the moment its
    child reached the server, since the parent may still be on its way. The
    demo records its story of the past few hours in one go, so without this
    the broken link would have arrived seconds before the check runs, and
    would rightly not be reported yet; the rule itself stays as it is."""
    Node.objects.filter(project=project, trace__trace_id=TRACE).update(received_at=F("timestamp"))
