"""One confidence from several uncertainty signals.

Each signal is first read as a confidence in [0, 1]: self-consistency and
retrieval score as they are, semantic entropy as 1 − entropy, tool reliability
as its confidence (a `ToolCheck`, a number, or "high"/"medium"/"low" = 0.95 /
0.6 / 0.2). The combined confidence is their weighted geometric mean over the
signals given (absent ones drop out and the weights are renormalized), so one
signal near zero pulls the whole down, as a failed tool call should, where an
average would hide it. Default weights:

    self_consistency 0.35, semantic_entropy 0.25, retrieval_score 0.2, tool_reliability 0.2

The parts travel with the result, under the node metric names the dashboard
charts (`self_consistency_score`, `semantic_entropy`, `retrieval_score`,
`tool_reliability`), next to `fused_confidence`.
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass

from denoiseflow.tool_checks import LEVEL_CONFIDENCE

DEFAULT_WEIGHTS = {"self_consistency": 0.35, "semantic_entropy": 0.25, "retrieval_score": 0.2,
                   "tool_reliability": 0.2}
METRIC_NAMES = {"self_consistency": "self_consistency_score", "semantic_entropy": "semantic_entropy",
                "retrieval_score": "retrieval_score", "tool_reliability": "tool_reliability"}
FLOOR = 1e-3  # log(0) is undefined; a signal of 0 still drags the result to near 0


@dataclass(frozen=True)
class CombinedConfidence:
    confidence: float
    metrics: dict  # each signal as given (tool reliability as a number), plus fused_confidence (the combination)
    weights: dict  # the weights used, renormalized over the signals given

    def node_fields(self) -> dict:
        return {"confidence": self.confidence, "metrics": dict(self.metrics)}


def unit(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name}: must be a number in [0, 1], not {value!r}")
    return float(value)


def tool_confidence(value) -> float:
    if isinstance(value, str):
        if value not in LEVEL_CONFIDENCE:
            raise ValueError(f"tool_reliability: must be high, medium, low or a number, not {value!r}")
        return LEVEL_CONFIDENCE[value]
    return unit("tool_reliability", getattr(value, "confidence", value))


def combine_signals(*, self_consistency=None, semantic_entropy=None, retrieval_score=None, tool_reliability=None,
                    weights: Mapping[str, float] | None = None) -> CombinedConfidence:
    """The combined confidence of the signals given (see the module doc)."""
    given = {}
    if self_consistency is not None:
        given["self_consistency"] = unit("self_consistency", getattr(self_consistency, "confidence",
                                                                     self_consistency))
    if semantic_entropy is not None:
        given["semantic_entropy"] = unit("semantic_entropy", semantic_entropy)
    if retrieval_score is not None:
        given["retrieval_score"] = unit("retrieval_score", retrieval_score)
    if tool_reliability is not None:
        given["tool_reliability"] = tool_confidence(tool_reliability)
    if not given:
        raise ValueError("combine_signals needs at least one signal")
    chosen = DEFAULT_WEIGHTS if weights is None else {**DEFAULT_WEIGHTS, **weights}
    unknown = set(chosen) - set(DEFAULT_WEIGHTS)
    if unknown:
        raise ValueError(f"unknown signal weights: {sorted(unknown)}")
    if any(not isinstance(w, (int, float)) or isinstance(w, bool) or w < 0 for w in chosen.values()):
        raise ValueError("weights must be numbers >= 0")
    total = sum(chosen[name] for name in given)
    if total <= 0:
        raise ValueError("the signals given all have weight 0")
    used = {name: chosen[name] / total for name in given}
    confidences = {name: 1.0 - value if name == "semantic_entropy" else value for name, value in given.items()}
    combined = math.exp(sum(used[name] * math.log(max(FLOOR, confidences[name])) for name in given))
    combined = round(min(1.0, max(0.0, combined)), 6)
    metrics = {METRIC_NAMES[name]: round(value, 6) for name, value in given.items()}
    metrics["fused_confidence"] = combined  # the node metric's name, charted by the dashboard
    return CombinedConfidence(combined, metrics, used)


# The first name, which the README's guide still shows: "fused" elsewhere means
# blocked (a fuse decision), so the combining function is combine_signals.
fuse_signals = combine_signals
