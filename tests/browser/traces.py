"""Traces as agents send them, shared by the page tests and the browser tests."""

from tests.support.browser import sign_in
from tests.support.events import fuse_event, node_event, review_event


def bad_answer_trace(trace_id: str = "t1", prefix: str = "") -> list[dict]:
    """retrieval → reasoning → verification → final answer; one retrieved
    fragment is fused, and a reviewer marked the answer incorrect."""
    p = prefix
    return [
        node_event(f"{p}q", trace_id, agent_id="gateway", source_type="user_input",
                   content="What is the capital of Australia?"),
        node_event(f"{p}frag-ok", trace_id, parents=[f"{p}q"], seconds=1, agent_id="retriever", step="retrieval",
                   source_type="retrieval", confidence=0.9, content="Canberra is the capital."),
        node_event(f"{p}frag-bad", trace_id, parents=[f"{p}q"], seconds=2, agent_id="retriever", step="retrieval",
                   source_type="retrieval", confidence=0.45, content="Sydney is the capital.",
                   raw_input="query: capital", metrics={"retrieval_similarity": 0.45}),
        fuse_event(f"{p}frag-bad", trace_id=trace_id, reason="similarity 0.45 below 0.6",
                   event_id=f"fuse-{trace_id}-{p}frag-bad"),
        node_event(f"{p}concl", trace_id, parents=[f"{p}frag-ok", f"{p}frag-bad"], seconds=3, agent_id="reasoner",
                   step="reasoning", source_type="reasoning", confidence=0.8, content="It is Sydney."),
        node_event(f"{p}check", trace_id, parents=[f"{p}concl"], seconds=4, agent_id="verifier", step="verification",
                   source_type="verification", confidence=0.85),
        node_event(f"{p}final", trace_id, parents=[f"{p}check"], seconds=5, agent_id="answerer", step="answer",
                   source_type="final_answer", confidence=0.7, content="Sydney."),
        review_event(trace_id, "incorrect", event_id=f"review-{trace_id}"),
    ]


def open_bad_answer_trace(page, server, key: str, trace_id: str) -> None:
    """Ingests bad_answer_trace(trace_id), signs in and opens its trace page."""
    server.ingest(key, *bad_answer_trace(trace_id))
    sign_in(page, server)
    page.goto(f"{server.url}/p/acme/traces/{trace_id}/")


def large_trace(trace_id: str, size: int, seed: int = 1) -> list[dict]:
    """A wide, deep DAG: each node consumes one or two earlier nodes, mostly recent ones."""
    import random

    rng = random.Random(seed)
    events = []
    for i in range(size):
        parents = sorted({f"n{rng.randrange(max(0, i - 200), i)}" for _ in range(rng.choice((1, 2)))}) if i >= 20 else []
        extra = {"confidence": round(rng.random(), 3)} if i % 7 else {}
        if i % 97 == 5:
            extra["fuse"] = {"decision": "block", "reason": "below threshold", "threshold": 0.5}
        events.append(node_event(f"n{i}", trace_id, parents=parents, seconds=i / 100, agent_id=f"agent-{i % 13}",
                                 step=f"step-{i % 5}", **extra))
    return events
