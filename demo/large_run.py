"""A long multi-agent run with backflow rounds, as ingest events: what a
planner → retriever → reasoner → verifier loop leaves behind after a hundred
rounds, and what the trace page has to keep readable.

One retrieved fragment of the first round (`frag-c`) is below the threshold
and is consumed anyway: it is the root cause of the final answer, thousands of
nodes later. A few later steps are doubtful too, and some fragments are fused by
the reasoner (and dropped), so the page has anomalies to show outside any fold.
Used by the demo, the benchmarks and the browser tests.
"""

import random
from datetime import UTC, datetime, timedelta

FRAGMENTS = 8
CHAIN = 30


def large_run_events(trace_id: str, size: int, *, prefix: str = "", seed: int = 7,
                     start: datetime | None = None) -> list[dict]:
    """`size` node events (plus fuse events), oldest first; the last node is the
    final answer `<prefix>final`."""
    rng = random.Random(seed)
    start = start or datetime(2026, 11, 1, tzinfo=UTC)
    events: list[dict] = []
    clock = [start]

    def node(name, agent, step, source, parents, confidence=None, **extra):
        clock[0] += timedelta(milliseconds=rng.randint(20, 400))
        body = {"trace_id": trace_id, "product_id": prefix + name, "agent_id": agent, "step": step,
                "source_type": source, "parent_ids": [prefix + p for p in parents], **extra}
        if confidence is not None:
            body["confidence"] = confidence
        events.append({"id": f"ev:{trace_id}:{name}", "type": "node", "timestamp": clock[0].isoformat(), "body": body})
        return name

    def fuse(name, by):
        events.append({"id": f"fuse:{trace_id}:{name}", "type": "fuse", "timestamp": clock[0].isoformat(),
                       "body": {"trace_id": trace_id, "product_id": prefix + name, "decision": "block",
                                "reason": "similarity below 0.5", "threshold": 0.5, "by_agent_id": by}})

    nodes = 1
    previous = node("question", "gateway", "user_input", "user_input", [], content="Why did order A-1042 fail?")
    round_ = 0
    while nodes < size - 1:
        round_ += 1
        plan = node(f"plan-{round_}", "planner", "planning", "reasoning", [previous], round(rng.uniform(0.8, 0.95), 3),
                    round=round_)
        nodes += 1
        kept = []
        for k in range(FRAGMENTS):
            if nodes >= size - 1:
                break
            name = "frag-c" if round_ == 1 and k == 2 else f"frag-{round_}-{k}"
            if name == "frag-c":
                confidence = 0.31
            elif round_ % 9 == 4 and k == 5:
                confidence = 0.42  # off topic: the reasoner fuses it
            else:
                confidence = round(rng.uniform(0.72, 0.97), 3)
            node(name, "retriever", "retrieval", "retrieval", [plan], confidence, round=round_,
                 metrics={"retrieval_similarity": confidence})
            nodes += 1
            if confidence == 0.42:
                fuse(name, "reasoner")
            else:
                kept.append(name)
        link = kept or [plan]
        for j in range(CHAIN):
            if nodes >= size - 1:
                break
            doubtful = round_ % 25 == 12 and j == CHAIN // 2
            confidence = 0.44 if doubtful else round(rng.uniform(0.7, 0.95), 3)
            link = [node(f"reason-{round_}-{j}", "reasoner", "reasoning", "reasoning", link, confidence, round=round_)]
            nodes += 1
        if nodes < size - 1:
            link = [node(f"verify-{round_}", "verifier", "verification", "verification", link,
                         round(rng.uniform(0.75, 0.95), 3), round=round_)]
            nodes += 1
        previous = link[0]
    node("final", "answerer", "answer", "final_answer", [previous], 0.66, content="The order failed on payment.")
    return events


DEMO_TRACE = "demo-long-run"


DEMO_SIZE = 5000


def highest_round_node(size: int = DEMO_SIZE) -> str:
    """The node the health check names for the run's round-limit breach: the
    first of the highest round."""
    nodes = [e["body"] for e in large_run_events(DEMO_TRACE, size) if e["type"] == "node"]
    top = max(n.get("round") or 0 for n in nodes)
    return next(n["product_id"] for n in nodes if n.get("round") == top)


def record(recorder, now: datetime, size: int = DEMO_SIZE) -> None:
    """The demo's long run, through the SDK like any agent's events."""
    for event in large_run_events(DEMO_TRACE, size, prefix="", start=now - timedelta(hours=7)):
        recorder.emit(event["type"], event["body"], datetime.fromisoformat(event["timestamp"]), event["id"])
