"""The fuse loop in the demo: agents read their thresholds from the central
policy through the SDK's policy client (ETag), retry upstream with the fuse
reason, escalate to a person after repeated fuses. The demo starts lenient:
doubtful retrieval fragments (below the high-uncertainty threshold, above a
low block threshold) are used with care, and some of them mislead the
reasoning (demo.workflow). Partway through the history the retrieval block
threshold is changed the way a person would change it: to the threshold the
demo's own Calibration suggests on the reviews recorded until then
(policy.suggestion, the Calibration page's Apply); the agents — the history's
workflow and the story's own tickets alike — pick the new version up by ETag,
the retriever's share of the wrong answers falls, and the newest escalations
wait in the inbox. The new version's note quotes the figures Calibration
computed; what the change cost shows on Fuse rates, per policy version.

Told once per project: a later `load_demo` finds the demo's policy versions,
adds no story tickets and runs its new history under the policy in force;
`told_at` says when the first load told the story.
"""

import logging
import random
from datetime import datetime, timedelta

import denoiseflow
from denoiseflow import ConfidenceFuse, Output, PolicyClient
from metrics.params import ChartParams
from policy import store, suggestion
from policy.document import parse_document
from policy.models import PolicySource, PolicyVersion

logger = logging.getLogger(__name__)

EVERY = timedelta(minutes=20)
SPAN = timedelta(days=3)
CHANGE_BEFORE_NOW = timedelta(hours=30)
OPEN_FOR = timedelta(hours=6)  # escalations newer than this are left for the inbox
STUCK = 3
LENIENT = {"default": {"accept": 0.8, "block": 0.4, "max_rounds": 5, "max_retries": 2, "escalate_after": 3,
                       "by_agent_type": {"retrieval": {"accept": 0.8, "block": 0.3},
                                         "entity_extractor": {"accept": 0.8, "block": 0.55}},
                       "by_step": {"refund_decision": {"accept": 0.9, "block": 0.7}}}}
FRAGMENTS = [
    "Refunds are issued within 14 days of the return reaching the warehouse.",
    "Express orders ship within 24 hours on working days.",
    "Damaged items can be replaced or refunded; photos help the claim.",
    "A double charge is reversed automatically within 5 working days.",
]
FIRST_NOTE = "demo agents start lenient: retrieval block 0.3, doubtful fragments used with care"


def told_at(project) -> datetime | None:
    """The moment the story was first told (its `now`), or None before."""
    first = PolicyVersion.objects.filter(project=project, source=PolicySource.DEMO).order_by("version").first()
    return first.created_at + SPAN if first else None


def calibration_window(now: datetime) -> ChartParams:
    """The reviews the change is computed on: from the history's start to the
    change, in whole minutes (as the Calibration page's From/To take them)."""
    start = (now - SPAN).replace(second=0, microsecond=0)
    return ChartParams(start, (now - CHANGE_BEFORE_NOW).replace(second=0, microsecond=0))


class Story:
    """The demo's policy for one load and its agents' fuse (`fuse`, the
    policy client's), told in two halves around the change: the caller runs
    the history's tickets of each half with the same fuse. Its tickets are
    few (one each 20 minutes) and a quick load (`--scale`) keeps them all, so
    Calibration has the reviews it needs to suggest the change."""

    def __init__(self, recorder, project, now: datetime):
        self.recorder, self.project, self.now = recorder, project, now
        self.new = not PolicyVersion.objects.filter(project=project, source=PolicySource.DEMO).exists()
        if self.new:
            version(project, LENIENT, FIRST_NOTE, "demo", now - SPAN)
        self.change = calibration_window(now).end
        # The in-process server of a load can be slow to answer on a busy machine: wait for the policy.
        self.client = PolicyClient(recorder.url, recorder.api_key, refresh_interval=3600, timeout=60)
        self.fuse = ConfidenceFuse.from_policy(client=self.client)
        self.client.refresh()
        self.moments, moment = [], now - SPAN + timedelta(minutes=7)
        while self.new and moment < now - timedelta(minutes=5):
            self.moments.append(moment)
            moment += EVERY

    def tell(self, before_change: bool) -> int:
        """Records the story's tickets of one half; how many."""
        told = 0
        for index, moment in enumerate(self.moments):
            if (moment < self.change) != before_change:
                continue
            # The newest few tickets stump the retriever: their escalations wait in the inbox.
            stuck = index >= len(self.moments) - STUCK
            ticket(self.recorder, f"story-{moment:%Y%m%d-%H%M}", moment, self.fuse, self.now, stuck)
            told += 1
        if self.new and not before_change:
            runaway(self.recorder, self.now - timedelta(hours=9))
        return told

    def change_policy(self) -> None:
        if not self.new:
            return
        # Everything before the change is stored, so Calibration judges all of it.
        self.recorder.flush(timeout=300)
        if apply_calibration(self.project, self.now):
            self.client.refresh()  # the new version, by ETag

    def close(self) -> None:
        self.client.close()


def apply_calibration(project, now: datetime) -> store.Policy | None:
    """The retrieval block threshold Calibration suggests on the reviews before
    the change, applied as a person applies it from that page (its price seen,
    that threshold confirmed); None when Calibration offers none (a quick
    load's few reviews), and the story goes on under the strict policy."""
    params = calibration_window(now)
    try:
        seen = suggestion.preview(project, params, "by_agent_type", "retrieval", "default")
        return suggestion.apply(project, params, "by_agent_type", "retrieval", "default", "mia",
                                seen.suggestion.block, at=params.end)
    except suggestion.NoSuggestion as refused:
        logger.info("demo policy story: no change applied (%s)", refused)
        return None


def version(project, profiles: dict, note: str, who: str, at: datetime) -> store.Policy:
    profiles, note = parse_document({"profiles": profiles, "note": note})
    return store.replace(project, profiles, note, who, PolicySource.DEMO, at=at)


def ticket(recorder, trace_id: str, at: datetime, fuse: ConfidenceFuse, now: datetime, stuck: bool) -> None:
    rng = random.Random(trace_id)
    clock = Clock(at, rng)
    question = recorder.record(trace_id, "gateway", "Where is my refund?", source_type="user_input",
                               step="user_input", timestamp=clock(), round=1)
    recent = now - at < OPEN_FOR
    hard = stuck or rng.random() < 0.08
    base = rng.uniform(0.3, 0.95)

    def retrieve(feedback):
        # Told why it was fused, the retriever narrows its query: usually better.
        if hard:
            confidence = rng.uniform(0.1, 0.35)
        elif feedback is None:
            confidence = base
        else:
            confidence = min(0.97, base + rng.uniform(0.05, 0.4)) if rng.random() < 0.68 else rng.uniform(0.2, 0.5)
        text = rng.choice(FRAGMENTS) if feedback is None else f"{rng.choice(FRAGMENTS)} (query narrowed: {feedback.reason_code})"
        return Output(text, round(confidence, 3), metrics={"retrieval_similarity": round(confidence, 3)})

    result = denoiseflow.guard(retrieve, consumer="reasoning_agent", trace_id=trace_id, agent_id="retrieval_agent_v2",
                               step="retrieval", source_type="retrieval", parent_ids=[question], fuse=fuse,
                               recorder=recorder, clock=clock)
    if result.needs_person:
        if not recent:
            # Support judges what the fuse held back: a doubtful fragment is mostly wrong.
            correct = rng.random() < (result.verdict.confidence or 0.5)
            recorder.review(trace_id, "correct" if correct else "incorrect", result.node,
                            "checked by support after escalation", timestamp=clock(120, 900))
        return
    confidence = round(min(0.98, (result.verdict.confidence or 0.5) * rng.uniform(0.9, 1.1)), 3)
    answer = recorder.record(trace_id, "responder", "Your refund is on its way.", source_type="final_answer",
                             step="final_answer", parent_ids=[question, result.node], confidence=confidence,
                             round=result.attempts, timestamp=clock())
    if not recent:  # QA reviews every answer that went out, as in the history
        # An answer is as good as the fragment it rests on: a doubtful one is mostly wrong, a sure one rarely.
        correct = rng.random() < (0.25 if confidence < 0.5 else 0.92)
        recorder.review(trace_id, "correct" if correct else "incorrect", answer, "", timestamp=clock(60, 600))


RUNAWAY_TRACE = "story-runaway"
RUNAWAY_ROUNDS = 7


def runaway(recorder, at: datetime) -> None:
    """An agent without the ladder, looping past the round limit (the health
    check's round_limit_exceeded, the round_limit_breaches metric)."""
    trace_id = RUNAWAY_TRACE
    clock = Clock(at, random.Random(trace_id))
    parent = recorder.record(trace_id, "gateway", "Cancel my order and refund me", source_type="user_input",
                             timestamp=clock(), round=1, product_id=f"{trace_id}:input")
    for round_ in range(1, RUNAWAY_ROUNDS + 1):
        parent = recorder.record(trace_id, "planner_agent", f"plan, round {round_}", step="planning",
                                 source_type="reasoning", parent_ids=[parent], confidence=0.42, round=round_,
                                 timestamp=clock(), product_id=f"{trace_id}:plan-{round_}")


def runaway_last_node() -> str:
    return f"{RUNAWAY_TRACE}:plan-{RUNAWAY_ROUNDS}"


class Clock:
    """Timestamps a little apart, from `at` on."""

    def __init__(self, at: datetime, rng: random.Random):
        self.moment, self.rng = at, rng

    def __call__(self, low: float = 0.3, high: float = 2.0) -> datetime:
        self.moment += timedelta(seconds=self.rng.uniform(low, high))
        return self.moment
