"""Hand-built but varied traffic: traces spanning hours, every filter dimension,
nodes without confidence, inline and late fuse decisions."""

import random
from datetime import timedelta

from metrics.questions import Filters
from tests.conftest import BASE_TIME, fuse_event, node_event

AGENTS = ("retriever", "reasoner", "verifier")
STEPS = ("retrieval", "entity_extraction")
SOURCES = ("retrieval", "reasoning")
DECISIONS = ("accept", "downweight", "block")


def workflow_events(seed: int, traces: int, *, hours: float = 6, prefix: str = "") -> list[dict]:
    rng = random.Random(seed)
    events = []
    for t in range(traces):
        trace_id = f"{prefix}t{t}"
        start = rng.uniform(0, hours * 3600)
        for n in range(rng.randint(1, 7)):
            body = {"agent_id": rng.choice(AGENTS), "step": rng.choice(STEPS), "source_type": rng.choice(SOURCES)}
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
