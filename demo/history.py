"""Three days of ticket traffic, as the SDK would have recorded it.

Trace ids come from the ticket's start time, so loading the history again only
adds the tickets that are missing. The story (its incidents, its dense last
hour) is anchored at the first load's moment; a later load extends it up to
now at the regular pace only, so a restart adds the traffic of the time that
passed and never a new burst.
"""

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from demo.model_quality import HistoryNoise
from demo.policy_story import OPEN_FOR
from demo.workflow import Ticket, TraceWriter, run_ticket
from denoiseflow import ConfidenceFuse, Recorder, Thresholds

REGULAR_EVERY = timedelta(minutes=15)
INCIDENT_EVERY = timedelta(minutes=2)
RECENT = timedelta(hours=1)
RECENT_EVERY = timedelta(seconds=30)
BAD_ANSWER_TRACE = "demo-bad-answer"


def floor(moment: datetime, step: timedelta) -> datetime:
    epoch = datetime(2000, 1, 1, tzinfo=UTC)
    return epoch + ((moment - epoch) // step) * step


def trace_id_at(moment: datetime) -> str:
    return f"ticket-{moment:%Y%m%d-%H%M%S}"


def schedule(noise: HistoryNoise, scale: float = 1.0, until: datetime | None = None) -> list[datetime]:
    """Ticket start times: every 15 minutes, densely around incidents and in
    the story's last hour (alert windows need enough traces to mean
    something), then every 15 minutes from the story's end to `until` (a
    later load). `scale` below 1 thins out the older history (tests, quick
    runs); the last hour keeps its density so the demo alerts still fire."""
    now = noise.now
    times = set()

    def every(start: datetime, end: datetime, step: timedelta):
        # From the grid point at or before `start`: a thinned-out history
        # (large step) still reaches back its whole length, and the grid keeps
        # ticket ids stable from one load to the next.
        moment = floor(start, step)
        while moment < end:
            times.add(moment)
            moment += step

    every(noise.start, now - RECENT, REGULAR_EVERY / scale)
    for incident in noise.incidents:
        if incident.end < now - RECENT:
            every(incident.start - timedelta(minutes=20), incident.end + timedelta(minutes=20),
                  INCIDENT_EVERY / scale)
    every(now - RECENT, now, RECENT_EVERY)
    if until is not None and until > now:
        moment = floor(now, REGULAR_EVERY) + REGULAR_EVERY
        while moment < until:
            times.add(moment)
            moment += REGULAR_EVERY
    return sorted(times)


@dataclass
class Filled:
    tickets: int = 0
    skipped: int = 0


def fill(recorder: Recorder, noise: HistoryNoise, existing: set[str], fuse: ConfidenceFuse, filled: Filled,
         scale: float = 1.0, until: datetime | None = None, between: tuple = (None, None)) -> Filled:
    """Records the scheduled tickets that start in `between` ([from, to), None:
    unbounded) and are not in `existing`, gated by `fuse` (the policy
    client's: its thresholds are the policy in force while they run)."""
    low, high = between
    for start in schedule(noise, scale, until):
        if (low is not None and start < low) or (high is not None and start >= high):
            continue
        trace_id = trace_id_at(start)
        if trace_id in existing:
            filled.skipped += 1
            continue
        jitter = random.Random(trace_id).uniform(0, 20)
        moment = start + timedelta(seconds=jitter)
        judged = moment < (until or noise.now) - OPEN_FOR
        run_ticket(recorder, Ticket(trace_id, moment, noise.noise(moment), noise.drift(moment),
                                    escalations_judged=judged), fuse)
        filled.tickets += 1
    bad_answer_at = noise.now - timedelta(hours=2, minutes=10)
    if BAD_ANSWER_TRACE not in existing and (low is None or bad_answer_at >= low) and (
            high is None or bad_answer_at < high):
        record_bad_answer(recorder, bad_answer_at)
        filled.tickets += 1
    return filled


# The bad answer's story is told as it happened, whatever the policy says now:
# its reasoning agent's fuse blocked the 0.31 fragment at 0.5.
BAD_ANSWER_FUSE = ConfidenceFuse(by_agent_type={"retrieval": Thresholds(accept=0.75, block=0.5)})


def record_bad_answer(recorder: Recorder, at: datetime) -> None:
    """The story the README tells: a stale policy fragment was retrieved with
    low confidence and fused by the reasoning agent's own fuse — which then used
    it anyway. The verifier checked only the logic, the answer went out wrong,
    and QA marked it incorrect. Its root cause is the fused fragment."""
    w = TraceWriter(recorder, BAD_ANSWER_TRACE, at, random.Random(BAD_ANSWER_TRACE), BAD_ANSWER_FUSE)
    ticket = "I returned the blender on 2 March from Berlin. Where is my refund for order A-1043?"
    question = w.node("input", "gateway", ticket, step="user_input", source_type="user_input", seconds=(0, 0))
    intent = w.node("intent", "intent_classifier_v3", "refund_status", step="intent", source_type="reasoning",
                    parents=[question], round=1, confidence=1.0,
                    metrics={"vote_ratio": 1.0, "self_consistency_score": 1.0, "samples": 5})
    entities = w.node("entities", "entity_extractor_v2", '{"order_id": "A-1043", "date": "2 March", "item": "blender"}',
                      step="entity_extraction", source_type="reasoning", parents=[question], round=1,
                      confidence=0.91)
    basis = w.consume("retrieval_agent_v2", [intent, entities])
    texts = [
        ("Refunds for returned items are issued within 14 days of the return reaching the warehouse.", 0.86),
        ("Orders shipped outside the EU are not eligible for refunds (policy of 2019).", 0.31),
        ("Refund status is shown on the order page once the return is processed.", 0.78),
    ]
    fragments = [
        w.node(f"fragment{k}:r1", "retrieval_agent_v2", text, step="retrieval", source_type="retrieval",
               parents=basis, round=1, confidence=confidence, metrics={"retrieval_similarity": confidence},
               seconds=(0.05, 0.3))
        for k, (text, confidence) in enumerate(texts, start=1)
    ]
    w.consume("reasoning_agent", [intent, entities, *fragments])  # blocks fragment2 ...
    reasoning = w.node("reasoning:r1", "reasoning_agent",
                       "Order A-1043 was shipped outside the EU, so it is not eligible for a refund.",
                       step="reasoning", source_type="reasoning", round=1, confidence=0.74,
                       parents=[intent, entities, *fragments],  # ... and consumes it anyway
                       metadata={"note": "consumed a fragment its own fuse had blocked"})
    verification = w.node("verification:r1", "verifier", "Conclusion follows from the cited policy.",
                          step="verification", source_type="verification", parents=[reasoning], round=1,
                          confidence=0.83)
    summary = w.node("summary", "summarizer", "Summary: order A-1043 is not eligible for a refund (non-EU).",
                     step="summary", source_type="summary", parents=w.consume("summarizer", [reasoning, verification]),
                     round=1, confidence=0.79)
    final = w.node("final", "responder",
                   "Hello, unfortunately order A-1043 shipped outside the EU and is not eligible for a refund.",
                   step="final_answer", source_type="final_answer", parents=[summary], round=1, confidence=0.78)
    w.review(final, False, "Customer is in Berlin; the answer relied on a 2019 policy fragment that had been fused.")


