"""The degrade ladder: run a producing step, gate its output, and when the
gate blocks, climb: retry upstream with the reason, cross-check, then hand the
artifact to a person.

    result = denoiseflow.guard(fetch_fragment, consumer="reasoning_agent", trace_id="ticket-7",
                               agent_id="retrieval_agent_v2", step="retrieval")
    if result.needs_person: ...

`produce(feedback)` returns an `Output` (or a `(content, confidence)` pair).
It is called with `feedback=None` first; on a retry, `feedback` is a `Feedback`
naming the attempt, the fuse reason and its code, so the producer can do
better than repeat itself. Every attempt is recorded as a node (retries with
`retry_of` and `attempt`), every decision as a fuse event by the consumer,
carrying its `reason_code` and `policy_version`. Each attempt's node carries
the producer call's `duration_ms` (and its model, usage or cost when the
producer returns them in its `Output`, or as `df.Priced`); a retry is the
price of a fuse: `metadata.expensive_path = "fuse_retry"`, `expensive_path_of`
= the first attempt's product id.

The limits come from the policy profile (`max_retries`, `escalate_after`,
`max_rounds`) unless given. An accepted first attempt, the common case, costs
one event: its node carries the decision inline; every other decision is a
fuse event by the consumer. Fuses are counted per ticket (trace) and step
(consumer, agent, step within the trace), across calls on that ticket: the
`escalate_after`-th fuse in a row records an `escalation` and the result says
a person must decide. One ticket's fuses never count towards another's, so
`evaluate` decides the same at any concurrency. Attempt k runs in round
`round + k - 1`; a round beyond `max_rounds` is not run: the stop is recorded
as an escalation. `produce` and `cross_check` may be coroutine functions:
`guard` then returns an awaitable.

One logic drives both: `_ladder` is a generator that yields the calls to make
and receives their results; `guard` makes them directly or awaits them.
"""

import dataclasses
import inspect
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from denoiseflow.awaitables import is_async
from denoiseflow.costs import FUSE_RETRY, marked, unwrap
from denoiseflow.fuse import ACCEPT, BLOCK, DOWNWEIGHT, ConfidenceFuse, FuseResult
from denoiseflow.recorder import NodeRef, get_recorder, new_product_id
from denoiseflow.vocabulary import DEFAULT_PROFILE

ACCEPTED, DOWNWEIGHTED, BLOCKED, ESCALATED, ROUND_LIMIT = (
    "accepted", "downweighted", "blocked", "escalated", "round_limit")
CROSS_CHECK_FAILED = "cross_check_failed"


@dataclass(frozen=True)
class Output:
    """What a producer made."""

    content: Any
    confidence: float | None = None
    confidence_scale: float | None = None
    metrics: dict | None = None
    metadata: dict | None = None
    # What the attempt cost: guard times each call; the producer may say the rest.
    duration_ms: float | None = None
    model: str | None = None
    usage: dict | None = None
    cost_usd: float | None = None


@dataclass(frozen=True)
class Feedback:
    """Why the previous attempt was fused, for the producer's next one."""

    attempt: int  # the attempt about to run; 2 is the first retry
    reason: str
    reason_code: str
    previous: NodeRef
    verdict: FuseResult


@dataclass
class GuardResult:
    outcome: str  # accepted, downweighted, blocked (retries used up), escalated, round_limit
    content: Any = None
    verdict: FuseResult | None = None
    node: NodeRef | None = None
    attempts: int = 0
    verdicts: list[FuseResult] = field(default_factory=list)
    reason: str = ""

    @property
    def ok(self) -> bool:
        """The output may be used (downweighted outputs with care)."""
        return self.outcome in (ACCEPTED, DOWNWEIGHTED)

    @property
    def needs_person(self) -> bool:
        return self.outcome in (ESCALATED, ROUND_LIMIT)


@dataclass(frozen=True)
class Limits:
    max_retries: int
    escalate_after: int
    max_rounds: int


class _Streaks:
    """Consecutive fuses per (trace, consumer, agent, step), across calls on
    that trace. A streak left open (retries used up, no escalation yet) is
    kept for the ticket's next call; the oldest open streaks are forgotten
    past `limit`, so a long-running process holds a bounded number."""

    def __init__(self, limit: int = 100_000):
        self._counts: OrderedDict[tuple, int] = OrderedDict()
        self._lock = threading.Lock()
        self.limit = limit

    def fused(self, key: tuple) -> int:
        with self._lock:
            count = self._counts.pop(key, 0) + 1
            self._counts[key] = count
            while len(self._counts) > self.limit:
                self._counts.popitem(last=False)
            return count

    def reset(self, key: tuple) -> None:
        with self._lock:
            self._counts.pop(key, None)


STREAKS = _Streaks()
_PLAIN_FUSES: dict[str, ConfidenceFuse] = {}
_LIMITS: dict[tuple, tuple] = {}  # (policy copy id, profile, overrides) -> (that copy, Limits)


def as_output(value) -> Output:
    value, priced = unwrap(value)
    if priced:
        return dataclasses.replace(as_output(value), **priced)
    if isinstance(value, Output):
        return value
    if isinstance(value, tuple) and len(value) == 2:
        return Output(value[0], value[1])
    if isinstance(value, dict) and "content" in value:
        return Output(value["content"], value.get("confidence"), value.get("confidence_scale"),
                      value.get("metrics"), value.get("metadata"))
    raise TypeError("a producer returns an Output, a (content, confidence) pair or "
                    f"a dict with content and confidence, not {type(value).__name__}")


def limits_of(fuse: ConfidenceFuse, max_retries, escalate_after, max_rounds) -> Limits:
    """The profile's limits unless given; kept per policy copy (guard is on the hot path)."""
    current = fuse.policy.get() if fuse.policy is not None else None
    key = (id(current), fuse.profile, max_retries, escalate_after, max_rounds)
    found = _LIMITS.get(key)
    if found is not None and found[0] is current:
        return found[1]
    profile = current.profile(fuse.profile) if current is not None else {}

    def pick(given, name):
        return given if given is not None else profile.get(name, DEFAULT_PROFILE[name])

    limits = Limits(pick(max_retries, "max_retries"), pick(escalate_after, "escalate_after"),
                    pick(max_rounds, "max_rounds"))
    if len(_LIMITS) > 256:
        _LIMITS.clear()
    _LIMITS[key] = (current, limits)
    return limits


def guard(produce: Callable, *, consumer: str, trace_id: str, agent_id: str, step: str = "",
          source_type: str = "", parent_ids=(), fuse: ConfidenceFuse | None = None, profile: str = "default",
          cross_check: Callable | None = None, round: int = 1, max_retries: int | None = None,
          escalate_after: int | None = None, max_rounds: int | None = None, recorder=None, clock=None):
    """Runs the ladder (see the module's docstring); a `GuardResult`, or an
    awaitable of one when `produce` is a coroutine function. `clock()`, when
    given, stamps each recorded event (replaying history); default: now."""
    if fuse is None:
        fuse = _policy_fuse(profile)
    limits = limits_of(fuse, max_retries, escalate_after, max_rounds)
    ladder = _ladder(fuse, limits, _Events(recorder or get_recorder(), trace_id, consumer, clock), agent_id, step,
                     source_type, [str(p) for p in parent_ids], cross_check is not None, round)
    if is_async(produce) or is_async(cross_check):
        return _drive_async(ladder, produce, cross_check)
    return _drive(ladder, produce, cross_check)


def _policy_fuse(profile: str) -> ConfidenceFuse:
    found = _PLAIN_FUSES.get(profile)
    if found is None:
        found = _PLAIN_FUSES[profile] = ConfidenceFuse.from_policy(profile)
    return found


def _timed(answer, started: float) -> Output:
    """A producer's answer as an Output carrying the call's wall time (unless it says its own)."""
    output = as_output(answer)
    if output.duration_ms is None:
        output = dataclasses.replace(output, duration_ms=round((time.perf_counter() - started) * 1000, 3))
    return output


def _drive(ladder, produce, cross_check) -> GuardResult:
    call = next(ladder)
    while True:
        kind, argument = call
        try:
            started = time.perf_counter()
            answer = _timed(produce(argument), started) if kind == "produce" else unwrap(cross_check(*argument))[0]
            call = ladder.send(answer)
        except StopIteration as done:
            return done.value


async def _drive_async(ladder, produce, cross_check) -> GuardResult:
    call = next(ladder)
    while True:
        kind, argument = call
        started = time.perf_counter()
        answer = produce(argument) if kind == "produce" else cross_check(*argument)
        if inspect.isawaitable(answer):
            answer = await answer
        answer = _timed(answer, started) if kind == "produce" else unwrap(answer)[0]
        try:
            call = ladder.send(answer)
        except StopIteration as done:
            return done.value


class _Events:
    """What the ladder records, through the recorder."""

    def __init__(self, recorder, trace_id: str, consumer: str, clock):
        self.recorder, self.trace_id, self.consumer, self.clock = recorder, trace_id, consumer, clock

    def node(self, agent_id, step, source_type, parent_ids, output: Output, round_, previous, attempt,
             inline: FuseResult | None, first: NodeRef | None = None) -> NodeRef:
        product_id = new_product_id(self.trace_id, step or agent_id)
        body = {"trace_id": self.trace_id, "product_id": product_id, "agent_id": agent_id, "parent_ids": parent_ids,
                "round": round_}
        if step:
            body["step"] = step
        if source_type:
            body["source_type"] = source_type
        if output.content is not None:
            body["content"] = str(output.content)
        if output.confidence is not None:
            body["confidence"] = output.confidence
            if output.confidence_scale is not None:
                body["confidence_scale"] = output.confidence_scale
        if output.metrics:
            body["metrics"] = output.metrics
        if output.metadata:
            body["metadata"] = output.metadata
        for name in ("duration_ms", "model", "usage", "cost_usd"):
            if getattr(output, name) is not None:
                body[name] = getattr(output, name)
        if previous is not None:
            body["retry_of"] = previous.product_id
            body["attempt"] = attempt
            # A retry exists because a fuse blocked the attempt before: the price of that fuse.
            body["metadata"] = marked(output.metadata, FUSE_RETRY, first or previous)
        if inline is not None:
            body["fuse"] = inline.as_fuse()
        self.recorder.emit("node", body, self.clock() if self.clock else None)
        scale = output.confidence_scale or 1
        confidence = output.confidence / scale if isinstance(output.confidence, (int, float)) else None
        return NodeRef(self.trace_id, product_id, agent_id, confidence)

    def fuse(self, node: NodeRef, verdict: FuseResult) -> None:
        self.recorder.emit("fuse", {"trace_id": self.trace_id, "product_id": node.product_id,
                                    "by_agent_id": self.consumer, **verdict.as_fuse()},
                           self.clock() if self.clock else None)

    def escalation(self, node: NodeRef, reason: str) -> None:
        self.recorder.emit("escalation", {"trace_id": self.trace_id, "product_id": node.product_id,
                                          "reason": reason, "by_agent_id": self.consumer},
                           self.clock() if self.clock else None)


def _ladder(fuse, limits: Limits, events: _Events, agent_id, step, source_type, parent_ids, can_cross_check: bool,
            first_round: int):
    streak = (events.trace_id, events.consumer, agent_id, step)
    verdicts: list[FuseResult] = []
    previous: NodeRef | None = None
    first: NodeRef | None = None  # the first attempt, which every retry serves
    feedback: Feedback | None = None
    content = None
    for attempt in range(1, limits.max_retries + 2):
        round_ = first_round + attempt - 1
        if round_ > limits.max_rounds:
            reason = f"round limit reached: round {round_} would exceed max_rounds"
            stopped = previous or (NodeRef(events.trace_id, parent_ids[-1]) if parent_ids else None)
            if stopped is not None:
                events.escalation(stopped, reason)
            STREAKS.reset(streak)
            return GuardResult(ROUND_LIMIT, content, verdicts[-1] if verdicts else None, previous, attempt - 1,
                               verdicts, reason)
        output = as_output((yield "produce", feedback))
        content = output.content
        verdict = fuse.decide(output.confidence, scale=output.confidence_scale or 1.0, agent_type=agent_id,
                              step=step)
        verdicts.append(verdict)
        if verdict.decision == ACCEPT and previous is None:
            node = events.node(agent_id, step, source_type, parent_ids, output, round_, None, attempt, verdict)
            STREAKS.reset(streak)
            return GuardResult(ACCEPTED, content, verdict, node, attempt, verdicts, verdict.reason)
        node = events.node(agent_id, step, source_type, parent_ids, output, round_, previous, attempt, None, first)
        first = first or node
        events.fuse(node, verdict)
        if verdict.decision == DOWNWEIGHT and can_cross_check:
            if not (yield "check", (content, verdict)):
                verdict = FuseResult(BLOCK, verdict.confidence, "a cross-check disagreed", verdict.threshold,
                                  verdict.agent_type, CROSS_CHECK_FAILED, verdict.policy_version, verdict.rule)
                events.fuse(node, verdict)
                verdicts.append(verdict)
        if verdict.decision in (ACCEPT, DOWNWEIGHT):
            STREAKS.reset(streak)
            outcome = ACCEPTED if verdict.decision == ACCEPT else DOWNWEIGHTED
            return GuardResult(outcome, content, verdict, node, attempt, verdicts, verdict.reason)
        if STREAKS.fused(streak) >= limits.escalate_after:
            STREAKS.reset(streak)
            events.escalation(node, verdict.reason)
            return GuardResult(ESCALATED, content, verdict, node, attempt, verdicts, verdict.reason)
        previous = node
        feedback = Feedback(attempt + 1, verdict.reason, verdict.reason_code, node, verdict)
    return GuardResult(BLOCKED, content, verdicts[-1], previous, limits.max_retries + 1, verdicts,
                       verdicts[-1].reason)
