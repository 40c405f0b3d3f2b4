"""Stated confidence against review verdicts.

- Reliability diagram: ten equal-width confidence bins; per bin the count,
  the mean confidence and the share judged correct.
- Expected calibration error: Σ (n_bin / N) · |accuracy_bin − confidence_bin|.
- Brier score: mean of (confidence − correct)², correct being 1 or 0.
- ROC of the rule "confidence below t flags an incorrect answer": for every
  threshold t, the share of incorrect answers caught (true positive rate),
  the share of correct ones flagged anyway (false positive rate) and the
  review load (share of all answers flagged). The suggested threshold
  maximises Youden's J = caught − false alarms, the point where one more
  percent of review load stops buying a percent of caught errors; ties go to
  the lower threshold (less review).
- Other operating points on the same curve: the threshold of least expected
  cost (a missed error against a review) or the most errors caught within a
  review budget per day (`cheapest`, `within_budget`), and what any threshold
  does to the reviewed answers (`effect`: fuse rate, reviews per day,
  incorrect answers let through). ROC curves for self-consistency and
  semantic entropy beside the confidence's (`signal_rocs`).
- Correlation of uncertainty (1 − confidence) and of each reported metric
  with an incorrect verdict (Pearson, i.e. point-biserial).
- Per agent: the same error and AUC, and how far its mean confidence
  exceeds its share correct, so one badly calibrated agent stands out instead
  of only dragging the project's figures down. An agent with at least
  MIN_AGENT_REVIEWS reviews is called badly calibrated when its confidence
  ranks its mistakes poorly (AUC below UNINFORMATIVE_AUC, the usual line
  between poor and acceptable discrimination) or it states more confidence
  than it earns (overconfident by OVERCONFIDENT or more). A
  calibration error alone would also flag an agent that is right more often
  than it says, which is harmless to a fuse; with fewer reviews the figures
  are mostly noise.
"""

import math
from collections import Counter
from dataclasses import dataclass, field

from core.numbers import is_finite_number

BINS = 10
MIN_AGENT_REVIEWS = 20
UNINFORMATIVE_AUC = 0.7
OVERCONFIDENT = 0.1


@dataclass(frozen=True)
class Judged:
    confidence: float
    correct: bool
    metrics: dict = field(default_factory=dict)
    agent_id: str = ""


def by_value(pairs) -> list[tuple[float, int, int]]:
    """(value, correct, incorrect) per distinct value, ascending, of
    (value, correct) pairs. Every figure below is a sum over these: a
    window's reviews repeat few confidences, so the per-review work is one
    count (in C) and the rest runs once per distinct value."""
    return _by_value(Counter(pairs).items())


def _by_value(counted) -> list[tuple[float, int, int]]:
    """`by_value` of ((value, correct), how many) items already counted."""
    merged: dict = {}
    for (value, correct), n in counted:
        row = merged.setdefault(value, [0, 0])
        row[0 if correct else 1] += n
    return sorted((value, ok, bad) for value, (ok, bad) in merged.items())


def confidences(judged: list[Judged]) -> list[tuple[float, int, int]]:
    return by_value((j.confidence, j.correct) for j in judged)


def reliability(judged: list[Judged]) -> list[dict]:
    return _reliability(confidences(judged))


def _reliability(rows: list[tuple[float, int, int]]) -> list[dict]:
    counts, sums, rights = [0] * BINS, [0.0] * BINS, [0] * BINS
    for value, ok, bad in rows:
        i = min(int(value * BINS), BINS - 1)
        counts[i] += ok + bad
        sums[i] += value * (ok + bad)
        rights[i] += ok
    return [
        {
            "from": i / BINS,
            "to": (i + 1) / BINS,
            "count": counts[i],
            "mean_confidence": sums[i] / counts[i] if counts[i] else None,
            "accuracy": rights[i] / counts[i] if counts[i] else None,
        }
        for i in range(BINS)
    ]


def expected_calibration_error(judged: list[Judged], bins: list[dict] | None = None) -> float | None:
    if not judged:
        return None
    return _ece(bins or reliability(judged), len(judged))


def _ece(bins: list[dict], total: int) -> float:
    return sum(b["count"] / total * abs(b["accuracy"] - b["mean_confidence"]) for b in bins if b["count"])


def brier(judged: list[Judged]) -> float | None:
    return _brier(confidences(judged))


def _brier(rows: list[tuple[float, int, int]]) -> float | None:
    total = sum(ok + bad for _, ok, bad in rows)
    if not total:
        return None
    return sum(ok * (value - 1) ** 2 + bad * value ** 2 for value, ok, bad in rows) / total


def roc(judged: list[Judged]) -> dict:
    return _roc(confidences(judged))


def _roc(rows: list[tuple[float, int, int]]) -> dict:
    """The exact curve over every distinct value of `by_value`'s rows;
    `points` keeps one point per 0.01 of threshold (and the best one) so the
    chart stays small."""
    correct = sum(row[1] for row in rows)
    incorrect = sum(row[2] for row in rows)
    if not incorrect or not correct:
        return {"points": [], "auc": None, "best": None}
    total, last = correct + incorrect, len(rows) - 1
    caught = alarms = flagged = 0
    auc = previous_tpr = previous_fpr = 0.0
    best = point(0.0, 0.0, 0.0, 0.0)
    points, shown, best_j = [best], 0.0, 0.0
    for k, (value, ok, bad) in enumerate(rows):
        alarms += ok
        caught += bad
        flagged += ok + bad
        # t just above `value`: everything at or below it is flagged.
        threshold = rows[k + 1][0] if k < last else value + 1e-9
        tpr, fpr = caught / incorrect, alarms / correct
        auc += (fpr - previous_fpr) * (tpr + previous_tpr) / 2
        previous_tpr, previous_fpr = tpr, fpr
        # Points are built only when kept: there is one candidate per distinct value.
        j = round(tpr - fpr, 12)
        if j > best_j:
            best_j, best = j, point(threshold, tpr, fpr, flagged / total)
        if threshold >= shown + 0.01 or k == last:
            points.append(point(threshold, tpr, fpr, flagged / total))
            shown = threshold
    if best not in points:
        points = sorted([*points, best], key=lambda p: p["review_load"])
    return {"points": points, "auc": auc, "best": {**best, "youden_j": best["tpr"] - best["fpr"]}}


def point(threshold: float, tpr: float, fpr: float, load: float) -> dict:
    return {"threshold": threshold, "tpr": tpr, "fpr": fpr, "review_load": load}


def pearson(xs: list[float], ys: list[float]) -> float | None:
    n = len(xs)
    if n < 3:
        return None
    mx, my = math.fsum(xs) / n, math.fsum(ys) / n
    dx = [x - mx for x in xs]
    dy = [y - my for y in ys]
    # sumprod runs in C: tens of thousands of reviews stay a few milliseconds.
    sxx, syy = math.sumprod(dx, dx), math.sumprod(dy, dy)
    if not sxx or not syy:
        return None
    return math.sumprod(dx, dy) / math.sqrt(sxx * syy)


def correlations(judged: list[Judged]) -> list[dict]:
    """With an incorrect verdict: uncertainty first, then each reported metric."""
    wrong = [float(not j.correct) for j in judged]
    found = [{"name": "uncertainty (1 − confidence)", "count": len(judged),
              "correlation": pearson([1 - j.confidence for j in judged], wrong)}]
    columns = metric_columns(judged)
    for name in sorted(columns):
        values, wrongs = columns[name]
        found.append({"name": name, "count": len(values), "correlation": pearson(values, wrongs)})
    return found


def metric_columns(judged: list[Judged]) -> dict[str, tuple[list[float], list[float]]]:
    """{metric: (its finite values, 1.0 where that answer was incorrect else 0.0)}, in one pass."""
    columns: dict[str, tuple[list[float], list[float]]] = {}
    for j in judged:
        for name, value in j.metrics.items():
            if is_finite_number(value):
                if name not in columns:
                    columns[name] = ([], [])
                values, wrongs = columns[name]
                values.append(float(value))
                wrongs.append(0.0 if j.correct else 1.0)
    return columns


def by_agent(judged: list[Judged], whole: dict | None = None) -> list[dict]:
    """One row per agent, the worst calibrated first. `whole`: the ROC and
    calibration error of all of `judged` (summary's), the figures of an agent
    that holds every answer, not computed twice."""
    groups: dict[str, list] = {}
    for (agent_id, value, correct), n in Counter((j.agent_id, j.confidence, j.correct) for j in judged).items():
        groups.setdefault(agent_id, []).append(((value, correct), n))
    rows = []
    for agent_id, counted in groups.items():
        values = _by_value(counted)
        count = sum(ok + bad for _, ok, bad in values)
        incorrect = sum(bad for _, _, bad in values)
        mean_confidence = sum(value * (ok + bad) for value, ok, bad in values) / count
        accuracy = (count - incorrect) / count
        everything = whole is not None and count == len(judged)
        auc = whole["roc"]["auc"] if everything else _roc(values)["auc"]
        rows.append({
            "agent_id": agent_id,
            "count": count,
            "incorrect": incorrect,
            "mean_confidence": mean_confidence,
            "accuracy": accuracy,
            "overconfidence": mean_confidence - accuracy,
            "ece": whole["ece"] if everything else _ece(_reliability(values), count),
            "auc": auc,
            "badly_calibrated": count >= MIN_AGENT_REVIEWS and (
                (auc is not None and auc < UNINFORMATIVE_AUC) or mean_confidence - accuracy >= OVERCONFIDENT),
            "enough_reviews": count >= MIN_AGENT_REVIEWS,
        })
    # Flagged first, then the agents whose confidence ranks their mistakes worst.
    return sorted(rows, key=lambda r: (not r["badly_calibrated"], not r["enough_reviews"],
                                       1.0 if r["auc"] is None else r["auc"], r["agent_id"]))


def summary(judged: list[Judged]) -> dict:
    rows = confidences(judged)
    bins = _reliability(rows)
    found = {
        "count": len(judged),
        "incorrect": sum(bad for _, _, bad in rows),
        "reliability": bins,
        "ece": expected_calibration_error(judged, bins),
        "brier": _brier(rows),
        "roc": _roc(rows),
        "correlations": correlations(judged),
    }
    return {**found, "by_agent": by_agent(judged, found)}


# ---- operating points and their price

# The signals Calibration draws a ROC for besides the confidence: a node
# metric's name, and whether a higher value means more confidence.
SIGNALS = (("self_consistency_score", True), ("semantic_entropy", False))


def signal_rocs(judged: list[Judged], confidence_roc: dict | None = None) -> list[dict]:
    """The ROC of each signal the reviewed answers report (the confidence
    first; `confidence_roc`: its `roc`, when already computed), as `roc`
    computes it: for a signal where higher means less sure (entropy) its
    negation is ranked. Signals without both verdicts are left out."""
    found = [{"signal": "confidence", "count": len(judged), **_curve(confidence_roc or roc(judged))}]
    for name, higher_is_surer in SIGNALS:
        sign = 1 if higher_is_surer else -1
        scored = by_value((float(j.metrics[name]) * sign, j.correct)
                          for j in judged if is_finite_number(j.metrics.get(name)))
        curve = _roc(scored)
        if curve["auc"] is not None:
            found.append({"signal": name, "count": sum(ok + bad for _, ok, bad in scored), **_curve(curve)})
    return found


def _curve(found: dict) -> dict:
    return {"auc": found["auc"], "points": [{"fpr": p["fpr"], "tpr": p["tpr"]} for p in found["points"]]}


def effect(judged: list[Judged], threshold: float, days: float) -> dict:
    """What a block threshold does to these reviewed answers: the share it
    fuses (confidence below it), those answers per day (each one a person's
    review once the ladder escalates it), and the incorrect answers it lets
    through (at or above it)."""
    flagged = sum(j.confidence < threshold for j in judged)
    incorrect = sum(not j.correct for j in judged)
    let_through = sum(not j.correct and j.confidence >= threshold for j in judged)
    return {"threshold": threshold, "answers": len(judged), "flagged": flagged,
            "fuse_rate": flagged / len(judged) if judged else None,
            "reviews_per_day": flagged / days if days > 0 else None,
            "incorrect": incorrect, "let_through": let_through,
            "let_through_share": let_through / incorrect if incorrect else None}


def candidates(judged: list[Judged]) -> list[tuple[float, int, int]]:
    """(threshold, answers flagged, incorrect answers caught) for every
    threshold that flags a different set: nothing, then everything at or
    below each distinct confidence (the threshold just above it, as in `roc`)."""
    ordered = sorted((j.confidence, j.correct) for j in judged)
    found = [(0.0, 0, 0)]
    flagged = caught = i = 0
    while i < len(ordered):
        value = ordered[i][0]
        while i < len(ordered) and ordered[i][0] == value:
            flagged += 1
            caught += not ordered[i][1]
            i += 1
        found.append((ordered[i][0] if i < len(ordered) else value + 1e-9, flagged, caught))
    return found


def cheapest(judged: list[Judged], cost_miss: float, cost_review: float) -> dict | None:
    """The threshold of least expected cost: cost_miss per incorrect answer
    let through plus cost_review per answer fused (a person looks at it);
    ties go to the lower threshold (less review)."""
    incorrect = sum(not j.correct for j in judged)
    if not judged:
        return None
    best = min(candidates(judged), key=lambda c: (cost_miss * (incorrect - c[2]) + cost_review * c[1], c[0]))
    return {"threshold": best[0], "cost": cost_miss * (incorrect - best[2]) + cost_review * best[1]}


def within_budget(judged: list[Judged], reviews_per_day: float, days: float) -> dict | None:
    """The threshold that catches the most incorrect answers while fusing at
    most `reviews_per_day` of them a day; ties go to the lower threshold."""
    if not judged or days <= 0:
        return None
    allowed = [c for c in candidates(judged) if c[1] / days <= reviews_per_day]
    best = max(allowed, key=lambda c: (c[2], -c[0]))
    return {"threshold": best[0], "reviews_per_day": best[1] / days}
