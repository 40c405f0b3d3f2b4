"""Semantic entropy: how much a set of samples disagree in meaning, not wording.

Samples are clustered by meaning — with an `embed` callable, by cosine
similarity of their vectors; without one, by the vote's lexical similarity —
and the entropy of the cluster shares is normalized by its maximum, log(n),
so 0 means every sample says the same thing and 1 means no two agree.
Recorded as the node metric `semantic_entropy`.
"""

import math
from collections.abc import Callable, Sequence

from denoiseflow.similarity import MISSING, canonical, cluster_exact, cluster_similar, cosine, text_similarity

LEXICAL_THRESHOLD = 0.8  # the vote's default for free text
COSINE_THRESHOLD = 0.85


def normalized_entropy(sizes: Sequence[int]) -> float:
    total = sum(sizes)
    if total <= 1:
        return 0.0
    entropy = -sum(size / total * math.log(size / total) for size in sizes if size)
    return min(1.0, max(0.0, entropy / math.log(total)))


def meaning_clusters(samples: Sequence, embed: Callable | None = None, threshold: float | None = None) -> list[int]:
    """Cluster sizes of `samples` (failed samples, `MISSING`, left out)."""
    answered = [s for s in samples if s is not MISSING]
    if embed is not None:
        vectors = [list(embed(s)) for s in answered]
        limit = COSINE_THRESHOLD if threshold is None else threshold
        clusters = cluster_similar(answered, vectors, cosine, limit)
    else:
        keys = [canonical(s) for s in answered]
        if threshold is None and len(set(keys)) == 1:
            return [len(answered)]
        limit = LEXICAL_THRESHOLD if threshold is None else threshold
        clusters = cluster_exact(answered, keys) if limit >= 1.0 else cluster_similar(
            answered, answered, text_similarity, limit)
    return [c.size for c in clusters]


def semantic_entropy(samples: Sequence, embed: Callable | None = None, *, threshold: float | None = None) -> float:
    """Normalized semantic entropy in [0, 1] of `samples`.

    `embed(sample) -> vector` clusters by cosine similarity at `threshold`
    (default 0.85); without it, text similarity at `threshold` (default 0.8).
    """
    return round(normalized_entropy(meaning_clusters(samples, embed, threshold)), 6)
