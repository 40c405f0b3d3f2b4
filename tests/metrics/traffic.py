"""Hand-built but varied traffic: traces spanning hours, every filter dimension,
nodes without confidence, inline and late fuse decisions."""

import random
from datetime import timedelta

from metrics.questions import Filters
from tests.support.events import BASE_TIME, fuse_event, node_event, review_event

AGENTS = ("retriever", "reasoner", "verifier")
STEPS = ("retrieval", "entity_extraction")
SOURCES = ("retrieval", "reasoning")
DECISIONS = ("accept", "downweight", "block")


def workflow_events(seed: int, traces: int, *, hours: float = 6, prefix: str = "",
                    environment: str | None = None) -> list[dict]:
    rng = random.Random(seed)
    events = []
    for t in range(traces):
        trace_id = f"{prefix}t{t}"
        start = rng.uniform(0, hours * 3600)
        for n in range(rng.randint(1, 7)):
            body = {"agent_id": rng.choice(AGENTS), "step": rng.choice(STEPS), "source_type": rng.choice(SOURCES)}
            if environment:
                body["environment"] = environment
            if rng.random() < 0.8:
                body["round"] = rng.randint(1, 2)
            if rng.random() < 0.85:
                body["confidence"] = round(rng.random(), 3)
            if rng.random() < 0.1:
                body["status"] = "error"
            if rng.random() < 0.4:
                body["fuse"] = {"decision": rng.choice(DECISIONS), "reason": rng.choice(["low", "stale", "conflict"])}
            if rng.random() < 0.5:
                body["metrics"] = {"semantic_entropy": round(rng.uniform(0, 2.5), 3),
                                   "self_consistency_score": round(rng.random(), 3)}
            # Some traces run for over an hour, so they cross hour boundaries.
            seconds = start + n * rng.choice([5, 60, 900, 1500])
            events.append(node_event(f"{trace_id}-n{n}", trace_id, seconds=seconds, **body))
    return events


def late_fuse_events(events: list[dict], seed: int, count: int) -> list[dict]:
    rng = random.Random(seed)
    chosen = rng.sample([e for e in events if e["type"] == "node"], count)
    return [fuse_event(e["body"]["product_id"], rng.choice(DECISIONS), e["body"]["trace_id"],
                       event_id=f"late-{seed}-{e['id']}", reason="late look") for e in chosen]


def random_filters(rng: random.Random) -> Filters:
    return Filters(
        agent_id=rng.choice(["", "", *AGENTS]),
        step=rng.choice(["", "", *STEPS]),
        source_type=rng.choice(["", "", "", *SOURCES]),
        round=rng.choice([None, None, None, 1, 2]),
    )


def random_window(rng: random.Random):
    start = BASE_TIME + timedelta(minutes=rng.choice([0, 0, 60, rng.randint(-90, 400)]))
    length = timedelta(minutes=rng.choice([30, 60, 120, 240, 420, rng.randint(1, 600)]))
    return start, start + length


def post_in_batches(ingest, events: list[dict], size: int = 1000) -> None:
    for start in range(0, len(events), size):
        ingest(*events[start:start + size])


def steady_confidence_events(start, hours: int, *, per_hour: int = 40, shifted=range(0), seed: int = 7,
                             prefix: str = "s") -> list[dict]:
    """Demo-like traffic: `per_hour` one-node traces an hour from `start` with
    confidence around 0.75, around 0.35 in the hours listed in `shifted`."""
    rng = random.Random(seed)
    events = []
    for hour in range(hours):
        centre = 0.35 if hour in shifted else 0.75
        for i in range(per_hour):
            at = start + timedelta(hours=hour, seconds=(i + rng.random()) * 3600 / per_hour)
            events.append({"id": f"{prefix}{hour}-{i}", "type": "node", "timestamp": at.isoformat(),
                           "body": {"trace_id": f"{prefix}{hour}-{i}", "product_id": f"{prefix}{hour}-{i}",
                                    "agent_id": "answerer", "confidence": min(1, max(0, rng.gauss(centre, 0.1)))}})
    return events


def fuse_loop_events(events: list[dict], seed: int, *, hours: float = 6, prefix: str = "") -> list[dict]:
    """What the fuse loop adds to `events`: policy versions on their inline
    fuses (changed in place), late decisions under versions at other hours
    (some about nodes that never arrive), retries (some fused again),
    escalations (some naming unknown nodes) and reviews (some traces twice)."""
    rng = random.Random(seed)
    nodes = [e for e in events if e["type"] == "node"]
    for e in nodes:
        if "fuse" in e["body"]:
            e["body"]["fuse"]["policy_version"] = rng.choice([1, 2, None])

    def at(seconds: float) -> str:
        return (BASE_TIME + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")

    added = []
    for i, e in enumerate(rng.sample(nodes, min(len(nodes), 40))):
        body = e["body"]
        fuse = fuse_event(body["product_id"], rng.choice(DECISIONS), body["trace_id"], event_id=f"{prefix}v-{seed}-{i}",
                          reason="policy look", policy_version=rng.choice([1, 2, None]))
        fuse["timestamp"] = at(rng.uniform(0, hours * 3600))
        added.append(fuse)
    for i in range(8):
        fuse = fuse_event(f"{prefix}ghost-{seed}-{i}", "block", f"{prefix}ghost-trace-{i % 3}",
                          event_id=f"{prefix}ghost-fuse-{seed}-{i}", policy_version=rng.choice([1, 2]))
        fuse["timestamp"] = at(rng.uniform(0, hours * 3600))
        added.append(fuse)
    for i, e in enumerate(rng.sample(nodes, min(len(nodes), 25))):
        body = e["body"]
        extra = {"fuse": {"decision": "block", "reason": "still low"}} if rng.random() < 0.4 else {}
        seconds = rng.uniform(0, hours * 3600)
        added.append(node_event(f"{prefix}retry-{seed}-{i}", body["trace_id"], retry_of=body["product_id"], attempt=2,
                                seconds=seconds, agent_id=body["agent_id"], step=body["step"],
                                source_type=body["source_type"], **extra))
    for i, e in enumerate(rng.sample(nodes, min(len(nodes), 30))):
        product = e["body"]["product_id"] if rng.random() < 0.85 else f"{prefix}unknown-{seed}-{i}"
        added.append({"id": f"{prefix}esc-{seed}-{i}", "type": "escalation", "timestamp": at(rng.uniform(0, hours * 3600)),
                      "body": {"trace_id": e["body"]["trace_id"], "product_id": product, "reason": "3 fuses"}})
    traces = sorted({e["body"]["trace_id"] for e in nodes})
    for i, trace in enumerate(rng.sample(traces, min(len(traces), 30))):
        for n in range(rng.choice([1, 1, 2])):
            review = review_event(trace, rng.choice(["correct", "incorrect"]), event_id=f"{prefix}rev-{seed}-{i}-{n}")
            review["timestamp"] = at(rng.uniform(0, hours * 3600))
            added.append(review)
    return added


# Sixteen agents with 2 to 17 traces each, and one answerer with every trace:
# the chart legends keep the eight busiest (the answerer, agent_15 … agent_09)
# and pool agent_00 … agent_08.
MANY_AGENTS = [f"agent_{k:02d}" for k in range(16)]
POOLED_AGENTS = MANY_AGENTS[:9]


def many_agents_events(end, hours: int = 40) -> list[dict]:
    """Traces over the `hours` before `end` (an aware datetime): each one a
    retrieval by one of MANY_AGENTS (fused now and then, timed, priced,
    with a metric) and a final answer by "answerer", reviewed."""
    events, i = [], 0
    for k, agent in enumerate(MANY_AGENTS):
        for _ in range(2 + k):
            at = (end - timedelta(hours=1 + (i * 7) % hours, minutes=i % 50)).isoformat()
            retrieval = {"trace_id": f"m{i}", "product_id": f"m{i}-a", "agent_id": agent, "step": f"step_{i % 3}",
                         "source_type": "retrieval", "confidence": round(0.05 + (i * 37 % 90) / 100, 2),
                         "duration_ms": 100 + (i * 53) % 900, "model": "m-small",
                         "usage": {"input_tokens": 100 + i, "output_tokens": 10}, "cost_usd": 0.001 * (1 + i % 5),
                         "metrics": {"retrieval_similarity": (i % 5) / 5}}
            if (i + k) % 3 == 0:
                retrieval["fuse"] = {"decision": "block", "reason": "similarity below the line", "threshold": 0.5}
            answer = {"trace_id": f"m{i}", "product_id": f"m{i}-b", "agent_id": "answerer", "step": "answer",
                      "source_type": "final_answer", "confidence": 0.3 + (i % 7) / 10, "parent_ids": [f"m{i}-a"],
                      "duration_ms": 400 + (i * 31) % 2000}
            events += [{"id": f"ev-m{i}", "type": "node", "timestamp": at, "body": retrieval},
                       {"id": f"ev-m{i}-b", "type": "node", "timestamp": at, "body": answer},
                       {"id": f"rv-m{i}", "type": "review", "timestamp": at,
                        "body": {"trace_id": f"m{i}", "verdict": "incorrect" if i % 3 else "correct"}}]
            i += 1
    return events
