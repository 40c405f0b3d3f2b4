"""Redundant execution: run a step several times, let the answers vote.

Samples run concurrently — `async def` steps awaited together on an event loop
(bounded by `max_concurrency`), plain functions on a thread pool — each with
its own variant from a diversity hook: by default temperatures within 0.7–1.0
and a rotating prompt perspective, passed as the keyword arguments the step
accepts (`temperature`, `perspective`). Answers are compared canonically (JSON
with sorted keys for structured answers, case and spacing ignored for labels;
`key=` picks what to compare) and clustered; the largest cluster wins if its
share of all samples reaches the agreement threshold (0.6), otherwise the
step falls back. The share is `vote_ratio`; the mean similarity of the answers
to the winner is the self-consistency confidence.

Validate-first (dynamic redundancy): with `validate=` (or `confidence_of=`)
the step runs once and that answer is returned at once if it passes; only a
failed validation or a confidence below `min_confidence` pays for the vote.
The result says which path ran (`path`), and so does the recorded node.

What it cost: every sample is timed, and a sample that returns `df.Priced`
says its model, usage or cost. `record()` then records each sample as a node
the vote consumes (the vote's own node carries the wall time, not the
samples' tokens, so nothing is counted twice); the samples beyond the first
call are marked `metadata.expensive_path = "redundant_sample"` with
`expensive_path_of` naming the vote. Without prices the vote alone is
recorded, with its wall time (`record_samples=True` records the samples anyway).
"""

import asyncio
import inspect
import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from denoiseflow.awaitables import is_async
from denoiseflow.costs import REDUNDANT_SAMPLE, marked, unwrap
from denoiseflow.entropy import normalized_entropy
from denoiseflow.recorder import NodeRef, get_recorder, new_product_id
from denoiseflow.similarity import (
    MISSING,
    Cluster,
    canonical,
    cluster_exact,
    cluster_similar,
    exact_similarity,
    text_similarity,
)
from denoiseflow.validators import outcome
from denoiseflow.vocabulary import BLOCK, DOWNWEIGHT

DEFAULT_TEMPERATURES = (0.7, 0.85, 1.0)
# Rotated across samples so that they differ in more than sampling noise.
PERSPECTIVES = (
    "",
    "Think it through step by step, then answer.",
    "Answer as a careful domain expert would.",
    "Consider what would make the obvious answer wrong, then answer.",
)
VOTED, VALIDATED, SAMPLED = "voted", "validated", "sampled"
MAX_LOSING_ANSWERS = 10
MAX_ANSWER_CHARS = 500


def diversity(temperatures: Sequence[float] = DEFAULT_TEMPERATURES, prompts: Sequence[str] | None = None,
              perspectives: Sequence[str] | None = PERSPECTIVES):
    """A diversity hook: sample i gets the i-th temperature, prompt and
    perspective, each list cycling on its own (3 temperatures × 4
    perspectives give 12 distinct variants)."""

    def variant(index: int) -> dict:
        chosen = {"temperature": temperatures[index % len(temperatures)]}
        if prompts:
            chosen["prompt"] = prompts[index % len(prompts)]
        if perspectives:
            chosen["perspective"] = perspectives[index % len(perspectives)]
        return chosen

    return variant


def as_text(answer) -> str | None:
    if answer is None or isinstance(answer, str):
        return answer
    if isinstance(answer, (dict, list, tuple)):
        return json.dumps(answer, sort_keys=True, ensure_ascii=False, default=str)
    return str(answer)


def short(answer) -> str:
    text = as_text(answer) or ""
    return text if len(text) <= MAX_ANSWER_CHARS else text[:MAX_ANSWER_CHARS] + "…"


@dataclass
class RedundantResult:
    answer: Any
    agreed: bool
    vote_ratio: float
    confidence: float | None
    samples: list  # answers in variant order, MISSING where a sample failed or did not validate
    clusters: list[Cluster] = field(default_factory=list)
    path: str = VOTED  # "voted"; validate-first: "validated" (one call) or "sampled"
    agreement: float = 0.6
    validation_error: str = ""  # why the first answer did not pass, on the "sampled" path
    # Per sample, in variant order: {"duration_ms", and "model", "usage", "cost_usd" when it said}.
    calls: list = field(default_factory=list)
    duration_ms: float | None = None  # the whole run's wall time

    @property
    def failures(self) -> int:
        return sum(1 for s in self.samples if s is MISSING)

    @property
    def fell_back(self) -> bool:
        return not self.agreed

    @property
    def semantic_entropy(self) -> float:
        return round(normalized_entropy([c.size for c in self.clusters]), 6)

    def metrics(self) -> dict:
        """Numeric metrics, for the dashboard's distributions: the vote's, and
        `expensive_path` (0 or 1) whose mean is how often sampling ran."""
        metrics = {"samples": len(self.samples), "failed_samples": self.failures}
        if self.path != VALIDATED:
            metrics.update(vote_ratio=round(self.vote_ratio, 4), clusters=len(self.clusters),
                           semantic_entropy=self.semantic_entropy)
            if self.confidence is not None:
                metrics["self_consistency_score"] = round(self.confidence, 4)
        if self.path != VOTED:
            metrics["expensive_path"] = int(self.path == SAMPLED)
        return metrics

    def metadata(self) -> dict:
        """The vote itself: the path taken, cluster sizes, the losing answers."""
        data = {"redundancy_path": self.path}
        if self.validation_error:
            data["validation_error"] = self.validation_error[:MAX_ANSWER_CHARS]
        if self.path != VALIDATED:
            data["agreement_threshold"] = self.agreement
            data["cluster_sizes"] = [c.size for c in self.clusters]
            losers = self.clusters[1:] if self.agreed else self.clusters
            data["losing_answers"] = [short(c.representative) for c in losers[:MAX_LOSING_ANSWERS]]
        return data

    def fuse(self) -> dict | None:
        """Without agreement the artifact is not trusted: the inline fuse says so."""
        if self.agreed:
            return None
        decision = BLOCK if self.answer is None else DOWNWEIGHT
        return {"decision": decision, "reason": f"vote {self.vote_ratio:.2f} below agreement {self.agreement:.2f}",
                "threshold": self.agreement, "reason_code": "vote_split"}

    def node_fields(self) -> dict:
        """Keyword arguments for `Recorder.record` describing this vote."""
        fields = {"content": as_text(self.answer), "confidence": self.confidence, "metrics": self.metrics(),
                  "metadata": self.metadata()}
        if (verdict := self.fuse()) is not None:
            fields["fuse"] = verdict
        return fields

    @property
    def priced(self) -> bool:
        return any(len(call) > 1 for call in self.calls)

    def record(self, trace_id: str, agent_id: str, *, recorder=None, record_samples: bool | None = None,
               **fields) -> NodeRef:
        """Records the vote as one node (and its samples, see the module's
        note); `fields` add to (or override) `node_fields()`."""
        recorder = recorder or get_recorder()
        merged = self.node_fields()
        merged["metadata"] = {**merged["metadata"], **(fields.pop("metadata", None) or {})}
        merged["metrics"] = {**merged["metrics"], **(fields.pop("metrics", None) or {})}
        if self.duration_ms is not None:
            merged["duration_ms"] = self.duration_ms
        if self.path == VALIDATED and self.calls:
            merged.update({k: v for k, v in self.calls[0].items() if k != "duration_ms"})
        elif record_samples or (record_samples is None and self.priced):
            merged["product_id"] = (fields.pop("product_id", None)
                                    or new_product_id(trace_id, fields.get("step") or agent_id))
            merged["parent_ids"] = [*fields.get("parent_ids", ()), *self.record_samples(
                trace_id, agent_id, recorder, merged["product_id"], fields)]
            fields.pop("parent_ids", None)
        merged.update(fields)
        return recorder.record(trace_id, agent_id, **merged)

    def record_samples(self, trace_id, agent_id, recorder, vote_id: str, fields: dict) -> list[NodeRef]:
        """One node per sample that answered, consuming what the vote consumes."""
        nodes = []
        for index, (sample, call) in enumerate(zip(self.samples, self.calls, strict=False)):
            metadata = {"redundancy_sample": index}
            if index > 0:
                metadata = marked(metadata, REDUNDANT_SAMPLE, vote_id)
            nodes.append(recorder.record(
                trace_id, agent_id, None if sample is MISSING else as_text(sample), step=fields.get("step", ""),
                source_type=fields.get("source_type", ""), parent_ids=fields.get("parent_ids", ()),
                status="error" if sample is MISSING else None, metadata=metadata, **call))
        return nodes


def keyword_filter(step) -> Callable[[dict], dict]:
    """Passes a variant's keys only where the step's signature takes them, so
    `lambda temperature: …` works with a hook that also offers a perspective."""
    try:
        parameters = inspect.signature(step).parameters.values()
    except (TypeError, ValueError):
        return dict
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return dict
    names = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return lambda variant: {k: v for k, v in variant.items() if k in names}


@dataclass
class Plan:
    """One redundant run's settings and the vote over its samples."""

    n: int
    variants: Callable[[int], dict]
    key: Callable | None
    similarity: Callable
    exact: bool
    similarity_threshold: float
    agreement: float
    fallback: Callable | None
    validate: Callable | None
    confidence_of: Callable | None
    min_confidence: float
    timeout: float | None
    concurrency: int

    @property
    def validate_first(self) -> bool:
        return self.validate is not None or self.confidence_of is not None

    def caller(self, step) -> Callable[[int], Any]:
        accepts = keyword_filter(step)
        return lambda index: step(**accepts(self.variants(index)))

    def finish(self, result: RedundantResult, calls: dict, started: float) -> RedundantResult:
        """The result with each sample's call (duration, priced fields) and the run's wall time."""
        result.calls = [calls.get(index, {}) for index in range(len(result.samples))]
        result.duration_ms = round((time.perf_counter() - started) * 1000, 3)
        return result

    def rejection(self, answer) -> str | None:
        return None if self.validate is None else outcome(self.validate, answer)

    def reported_confidence(self, answer) -> float | None:
        if self.confidence_of is None:
            return None
        try:
            value = self.confidence_of(answer)
        except Exception:  # an answer whose confidence cannot be read is not confident
            return None
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def first_verdict(self, answer) -> tuple[RedundantResult | None, str]:
        """The cheap path's result if the first answer passes, else (None, why not)."""
        if answer is MISSING:
            return None, "the first call failed"
        reason = self.rejection(answer)
        if reason is not None:
            return None, reason
        confidence = self.reported_confidence(answer)
        if self.confidence_of is not None and (confidence is None or confidence < self.min_confidence):
            shown = "unknown" if confidence is None else f"{confidence:.2f}"
            return None, f"confidence {shown} below {self.min_confidence:.2f}"
        return RedundantResult(answer, True, 1.0, confidence, [answer], [Cluster([0], answer)], VALIDATED,
                               self.agreement), ""

    def keep_valid(self, answers: list) -> list:
        return [MISSING if a is MISSING or self.rejection(a) is not None else a for a in answers]

    def tally(self, samples: list, path: str = VOTED, validation_error: str = "") -> RedundantResult:
        keys = [MISSING if s is MISSING else self.key_of(s) for s in samples]
        if self.exact:
            clusters = cluster_exact(samples, keys)
        else:
            clusters = cluster_similar(samples, keys, self.similarity, self.similarity_threshold)
        answered = [k for k in keys if k is not MISSING]

        def result(answer, agreed, ratio, confidence):
            return RedundantResult(answer, agreed, ratio, confidence, samples, clusters, path, self.agreement,
                                   validation_error)

        if not clusters:
            return result(self.fall_back([]), False, 0.0, 0.0)
        winner = clusters[0]
        vote_ratio = winner.size / len(samples)
        if self.exact:
            confidence = winner.size / len(answered)
        else:
            top = keys[winner.members[0]]
            confidence = min(1.0, sum(self.similarity(top, k) for k in answered) / len(answered))
        tied = len(clusters) > 1 and clusters[1].size == winner.size
        # A share below the threshold, or a tie for first place, is never agreement.
        if vote_ratio >= self.agreement and not tied:
            return result(winner.representative, True, vote_ratio, confidence)
        return result(self.fall_back([s for s in samples if s is not MISSING]), False, vote_ratio, confidence)

    def key_of(self, answer):
        value = answer if self.key is None else self.key(answer)
        return canonical(value) if self.exact else value

    def fall_back(self, answers: list):
        return self.fallback(answers) if self.fallback else None


def make_plan(n: int = 5, *, variants=None, key=None, mode="exact", similarity=None, similarity_threshold=0.8,
              agreement=0.6, fallback=None, validate=None, confidence_of=None, min_confidence=0.6,
              max_concurrency=None, max_workers=None, timeout=None) -> Plan:
    if n < 1:
        raise ValueError("n must be at least 1")
    if not 0.0 < agreement <= 1.0:
        raise ValueError("agreement must be in (0, 1]")
    if mode not in ("exact", "text"):
        raise ValueError("mode must be 'exact' or 'text'")
    exact = similarity is None and mode == "exact"
    return Plan(n, variants or diversity(), key, similarity or (exact_similarity if exact else text_similarity),
                exact, similarity_threshold, agreement, fallback, validate, confidence_of, min_confidence, timeout,
                max(1, min(n, max_concurrency or max_workers or n)))


def run_redundant(
    step: Callable[..., Any],
    n: int = 5,
    *,
    variants: Callable[[int], dict] | None = None,
    key: Callable[[Any], Any] | None = None,
    mode: str = "exact",
    similarity: Callable[[Any, Any], float] | None = None,
    similarity_threshold: float = 0.8,
    agreement: float = 0.6,
    fallback: Callable[[list], Any] | None = None,
    validate: Callable[[Any], Any] | None = None,
    confidence_of: Callable[[Any], float] | None = None,
    min_confidence: float = 0.6,
    max_concurrency: int | None = None,
    max_workers: int | None = None,
    timeout: float | None = None,
) -> RedundantResult:
    """Runs `step(**variants(i))` for i in range(n) concurrently and votes.

    `step` may be a plain function (run on threads) or an `async def` (awaited
    concurrently; from async code, `await arun_redundant(...)`). `mode` is
    "exact" (canonical equality) or "text" (difflib similarity at
    `similarity_threshold`); `similarity(a, b) -> [0, 1]` overrides it and
    `key(answer)` chooses what is compared. A sample that raises, does not
    finish within `timeout` seconds, or fails `validate` is a failed vote.
    Without agreement the answer is `fallback(successful answers)`, or None.

    With `validate` (a predicate: false, `(False, reason)` or raising fails) and/or
    `confidence_of(answer) -> float`, the step runs once first and that answer
    is returned if it validates and its confidence reaches `min_confidence`;
    otherwise the remaining n - 1 samples run and vote (`path == "sampled"`).
    """
    plan = make_plan(n, variants=variants, key=key, mode=mode, similarity=similarity,
                     similarity_threshold=similarity_threshold, agreement=agreement, fallback=fallback,
                     validate=validate, confidence_of=confidence_of, min_confidence=min_confidence,
                     max_concurrency=max_concurrency, max_workers=max_workers, timeout=timeout)
    if is_async(step):
        return run_coroutine(arun_with(plan, step))
    started, calls = time.perf_counter(), {}
    call = timed(plan.caller(step), calls)
    if not plan.validate_first:
        return plan.finish(plan.tally(plan.keep_valid(sample_threads(call, range(n), plan))), calls, started)
    first = sample_threads(call, [0], plan)[0] if timeout is not None else call_once(call, 0)
    cheap, reason = plan.first_verdict(first)
    if cheap is not None:
        return plan.finish(cheap, calls, started)
    rest = sample_threads(call, range(1, n), plan) if n > 1 else []
    return plan.finish(plan.tally(plan.keep_valid([first, *rest]), SAMPLED, reason), calls, started)


async def arun_redundant(step: Callable[..., Any], n: int = 5, **options) -> RedundantResult:
    """`run_redundant` for async code: the same options and result."""
    plan = make_plan(n, **options)
    if not is_async(step):
        return await asyncio.to_thread(run_redundant, step, n, **options)
    return await arun_with(plan, step)


async def arun_with(plan: Plan, step) -> RedundantResult:
    started, calls = time.perf_counter(), {}
    call = timed(plan.caller(step), calls)
    if not plan.validate_first:
        return plan.finish(plan.tally(plan.keep_valid(await sample_async(call, range(plan.n), plan))), calls, started)
    first = (await sample_async(call, [0], plan))[0]
    cheap, reason = plan.first_verdict(first)
    if cheap is not None:
        return plan.finish(cheap, calls, started)
    rest = await sample_async(call, range(1, plan.n), plan) if plan.n > 1 else []
    return plan.finish(plan.tally(plan.keep_valid([first, *rest]), SAMPLED, reason), calls, started)


def timed(call, calls: dict):
    """`call` that notes, per sample index, its duration and what a `Priced`
    answer said, and hands on the bare answer. A coroutine's time is its own
    (awaited here), not the time it waited for the event loop's other samples."""

    def note(index, started, result):
        value, fields = unwrap(result)
        calls[index] = {"duration_ms": round((time.perf_counter() - started) * 1000, 3), **fields}
        return value

    def run(index):
        started = time.perf_counter()
        result = call(index)
        if inspect.isawaitable(result):
            async def finish():
                return note(index, started, await result)
            return finish()
        return note(index, started, result)

    return run


def call_once(call, index: int):
    try:
        return settle(call(index))
    except Exception:
        return MISSING


def settle(value):
    """A plain function that returned a coroutine (`lambda: llm.agenerate(…)`) is awaited here."""
    return asyncio.run(value) if inspect.iscoroutine(value) else value


def sample_threads(call, indices, plan: Plan) -> list:
    indices = list(indices)
    samples: list = [MISSING] * len(indices)
    pool = ThreadPoolExecutor(max_workers=min(len(indices), plan.concurrency), thread_name_prefix="denoiseflow-vote")
    try:
        futures = {pool.submit(lambda i=i: settle(call(i))): slot for slot, i in enumerate(indices)}
        done, _ = wait(futures, timeout=plan.timeout)
        for future in done:
            if future.exception() is None:
                samples[futures[future]] = future.result()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return samples


async def sample_async(call, indices, plan: Plan) -> list:
    indices = list(indices)
    gate = asyncio.Semaphore(plan.concurrency)

    async def one(index):
        async with gate:
            value = call(index)
            return await value if inspect.isawaitable(value) else value

    tasks = [asyncio.ensure_future(one(i)) for i in indices]
    done, pending = await asyncio.wait(tasks, timeout=plan.timeout)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    return [t.result() if t in done and not t.cancelled() and t.exception() is None else MISSING for t in tasks]


def run_coroutine(coroutine):
    """Runs a coroutine to completion from sync code, even when the calling
    thread already runs an event loop (then on a helper thread's own loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="denoiseflow-loop") as pool:
        return pool.submit(asyncio.run, coroutine).result()
