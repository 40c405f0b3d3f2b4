"""When two answers say the same thing: canonical forms, similarity, clusters.

One definition serves the vote, semantic entropy and the reflection loop's
"converged" stop. Structured answers compare canonically: a dict (or a string
holding a JSON object or array) becomes JSON with sorted keys, so key order
never splits a vote; text compares case- and whitespace-insensitively.
"""

import difflib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any

MISSING = object()  # a sample that failed, timed out or did not validate


def canonical(answer) -> Any:
    """A hashable form under which equal answers are equal."""
    if isinstance(answer, str):
        text = answer.strip()
        if text[:1] in ("{", "["):
            try:
                return canonical(json.loads(text))
            except ValueError:
                pass
        return " ".join(text.split()).casefold()
    if isinstance(answer, (dict, list, tuple)) or (is_dataclass(answer) and not isinstance(answer, type)):
        structured = asdict(answer) if is_dataclass(answer) else answer
        return json.dumps(structured, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    try:
        hash(answer)
    except TypeError:
        return repr(answer)
    return answer


def canonical_text(answer) -> str:
    form = canonical(answer)
    return form if isinstance(form, str) else str(form)


def text_similarity(a, b) -> float:
    """difflib's ratio over canonical text: 1.0 for the same wording (or the same JSON)."""
    left, right = canonical_text(a), canonical_text(b)
    if left == right:
        return 1.0
    return difflib.SequenceMatcher(None, left, right, autojunk=False).ratio()


def exact_similarity(a, b) -> float:
    return 1.0 if canonical(a) == canonical(b) else 0.0


def cosine(u: Sequence[float], v: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(u, v, strict=True))
    norms = math.sqrt(sum(x * x for x in u)) * math.sqrt(sum(y * y for y in v))
    return dot / norms if norms else 0.0


@dataclass
class Cluster:
    members: list[int]  # sample indices
    representative: Any

    @property
    def size(self) -> int:
        return len(self.members)


def cluster_exact(answers: Sequence, keys: Sequence) -> list[Cluster]:
    """Groups answers whose keys are equal; largest cluster first, ties by first sight."""
    groups: dict[Any, list[int]] = {}
    for index, answer in enumerate(answers):
        if answer is not MISSING:
            groups.setdefault(keys[index], []).append(index)
    clusters = [Cluster(members, answers[members[0]]) for members in groups.values()]
    return sorted(clusters, key=lambda c: (-c.size, c.members[0]))


def cluster_similar(answers: Sequence, keys: Sequence, similarity: Callable[[Any, Any], float],
                    threshold: float) -> list[Cluster]:
    """Greedy clustering: each answer joins the first cluster whose first member
    it resembles at least `threshold` (compared by key). Largest cluster first;
    each cluster is represented by its medoid, its most typical wording."""
    clusters: list[Cluster] = []
    for index, answer in enumerate(answers):
        if answer is MISSING:
            continue
        home = next((c for c in clusters if similarity(keys[c.members[0]], keys[index]) >= threshold), None)
        if home is None:
            clusters.append(Cluster([index], answer))
        else:
            home.members.append(index)
    for cluster in clusters:
        cluster.representative = answers[medoid(cluster.members, keys, similarity)]
    return sorted(clusters, key=lambda c: (-c.size, c.members[0]))


def medoid(members: list[int], keys: Sequence, similarity) -> int:
    if len(members) <= 2:
        return members[0]
    return max(members, key=lambda m: sum(similarity(keys[m], keys[other]) for other in members))
