"""Redundant execution: run a step several times, let the answers vote.

Samples run in parallel on a thread pool, each with its own variant (a
temperature, a prompt wording) from a diversity hook. Answers are clustered —
exact match for labels, a similarity function for free text — and the largest
cluster wins if its share of all samples reaches the agreement threshold;
otherwise the step falls back. The share is reported as `vote_ratio`; the mean
similarity of the samples to the winning answer as the self-consistency
confidence.
"""

import difflib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

MISSING = object()


def label_key(answer) -> Any:
    """Labels compare case- and whitespace-insensitively."""
    if isinstance(answer, str):
        return " ".join(answer.split()).casefold()
    try:
        hash(answer)
    except TypeError:
        return repr(answer)
    return answer


def text_similarity(a, b) -> float:
    """difflib's ratio over normalized text: 1.0 for the same wording."""
    return difflib.SequenceMatcher(None, label_key(str(a)), label_key(str(b)), autojunk=False).ratio()


def exact_similarity(a, b) -> float:
    return 1.0 if label_key(a) == label_key(b) else 0.0


@dataclass
class Cluster:
    members: list[int]  # sample indices
    representative: Any


@dataclass
class RedundantResult:
    answer: Any
    agreed: bool
    vote_ratio: float
    confidence: float
    samples: list  # answers, MISSING where a sample failed
    clusters: list[Cluster] = field(default_factory=list)

    @property
    def failures(self) -> int:
        return sum(1 for s in self.samples if s is MISSING)

    @property
    def fell_back(self) -> bool:
        return not self.agreed

    def metrics(self) -> dict:
        return {
            "vote_ratio": round(self.vote_ratio, 4),
            "self_consistency_score": round(self.confidence, 4),
            "samples": len(self.samples),
            "clusters": len(self.clusters),
            "failed_samples": self.failures,
        }

    def node_fields(self) -> dict:
        """Keyword arguments for `Recorder.record` describing this vote."""
        return {"content": None if self.answer is None else str(self.answer), "confidence": self.confidence,
                "metrics": self.metrics()}


def diversity(temperatures: Sequence[float] = (0.2, 0.7, 1.0), prompts: Sequence[str] | None = None):
    """A diversity hook: sample i gets the i-th temperature and prompt, cycling."""

    def variant(index: int) -> dict:
        chosen = {"temperature": temperatures[index % len(temperatures)]}
        if prompts:
            chosen["prompt"] = prompts[index % len(prompts)]
        return chosen

    return variant


def cluster_answers(answers: Sequence, similarity: Callable[[Any, Any], float], threshold: float) -> list[Cluster]:
    """Greedy clustering: each answer joins the first cluster whose first member
    it resembles at least `threshold`. Largest cluster first."""
    clusters: list[Cluster] = []
    for index, answer in enumerate(answers):
        if answer is MISSING:
            continue
        home = next((c for c in clusters if similarity(answers[c.members[0]], answer) >= threshold), None)
        if home is None:
            clusters.append(Cluster([index], answer))
        else:
            home.members.append(index)
    for cluster in clusters:
        cluster.representative = medoid([answers[i] for i in cluster.members], similarity)
    return sorted(clusters, key=lambda c: (-len(c.members), c.members[0]))


def medoid(members: list, similarity) -> Any:
    """The member most like the others: the cluster's most typical wording."""
    if len(members) <= 2:
        return members[0]
    return max(members, key=lambda m: sum(similarity(m, other) for other in members))


def run_redundant(
    step: Callable[..., Any],
    n: int = 5,
    *,
    variants: Callable[[int], dict] | None = None,
    mode: str = "exact",
    similarity: Callable[[Any, Any], float] | None = None,
    similarity_threshold: float = 0.8,
    agreement: float = 0.6,
    fallback: Callable[[list], Any] | None = None,
    max_workers: int | None = None,
    timeout: float | None = None,
) -> RedundantResult:
    """Runs `step(**variants(i))` for i in range(n) in parallel and votes.

    `mode` is "exact" (labels) or "text" (difflib similarity); a custom
    `similarity(a, b) -> [0, 1]` overrides it. A sample that raises or does not
    finish within `timeout` counts as a failed vote. Without agreement the answer
    is `fallback(successful answers)`, or None.
    """
    if n < 1:
        raise ValueError("n must be at least 1")
    similarity = similarity or (text_similarity if mode == "text" else exact_similarity)
    variants = variants or diversity()
    samples: list = [MISSING] * n
    pool = ThreadPoolExecutor(max_workers=min(n, max_workers or n), thread_name_prefix="denoiseflow-vote")
    try:
        futures = {pool.submit(step, **variants(i)): i for i in range(n)}
        done, _ = wait(futures, timeout=timeout)
        for future in done:
            if future.exception() is None:
                samples[futures[future]] = future.result()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)

    clusters = cluster_answers(samples, similarity, similarity_threshold)
    if not clusters:
        return RedundantResult(fallback([]) if fallback else None, False, 0.0, 0.0, samples, clusters)
    winner = clusters[0]
    answered = [s for s in samples if s is not MISSING]
    vote_ratio = len(winner.members) / n
    confidence = sum(similarity(winner.representative, s) for s in answered) / len(answered)
    # Ties for first place are not agreement.
    tied = len(clusters) > 1 and len(clusters[1].members) == len(winner.members)
    agreed = vote_ratio >= agreement and not tied
    answer = winner.representative if agreed else (fallback(answered) if fallback else None)
    return RedundantResult(answer, agreed, vote_ratio, min(confidence, 1.0), samples, clusters)

