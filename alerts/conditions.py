"""What a rule's conditions mean: durations, comparisons, relative change.

A condition is stored as the contract writes it (`{"metric", "window", "change"?,
"filters"?, "op", "threshold"}`); `Condition.from_json` reads it back.
"""

import math
import operator
import re
from dataclasses import dataclass, field
from datetime import timedelta

from metrics.values import ALL_METRICS, Filters

HEALTH_FINDINGS = "health_findings"
ROUND_LIMIT_BREACHES = "round_limit_breaches"
# Accuracy of the newest finished evaluation run of `filters.dataset` (window
# ignored); relative: against the finished run before it.
EVAL_ACCURACY = "eval_accuracy"
RULE_METRICS = (*ALL_METRICS, HEALTH_FINDINGS, EVAL_ACCURACY)
# Shares between 0 and 1, shown (and typed in the rule builder) as percentages.
RATE_METRICS = ("high_uncertainty_ratio", "fuse_rate", "failure_rate", "downweight_rate", "retry_success_rate",
                "escalation_rate", "root_cause_share", EVAL_ACCURACY)
FILTER_KEYS = ("agent_id", "step", "source_type", "round", "model", "environment")  # filters over nodes
DATASET_FILTER = "dataset"  # eval_accuracy's one filter
RULE_FILTER_KEYS = (*FILTER_KEYS, DATASET_FILTER)
OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
MATCHES = ("all", "any")

_DURATION = re.compile(r"^(\d{1,7})(s|m|h|d)$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MAX_WINDOW_SECONDS = 31 * 86400


def parse_duration(text: str) -> int:
    """Seconds in `30s`, `15m`, `2h`, `1d`; ValueError otherwise."""
    found = _DURATION.match(text.strip()) if isinstance(text, str) else None
    if not found:
        raise ValueError("must be a duration such as 30s, 15m, 2h or 1d")
    return int(found[1]) * _UNIT_SECONDS[found[2]]


@dataclass(frozen=True)
class Condition:
    metric: str
    window_seconds: int
    op: str
    threshold: float
    relative: bool = False
    filters: Filters = field(default_factory=Filters)
    dataset: str = ""

    @classmethod
    def from_json(cls, data: dict) -> "Condition":
        given = data.get("filters") or {}
        return cls(
            metric=data["metric"],
            window_seconds=parse_duration(data.get("window") or "0s"),
            op=data["op"],
            threshold=float(data["threshold"]),
            relative=data.get("change") == "relative",
            filters=Filters(**{key: given[key] for key in FILTER_KEYS if given.get(key) not in (None, "")}),
            dataset=given.get(DATASET_FILTER) or "",
        )

    @property
    def window(self) -> timedelta:
        return timedelta(seconds=self.window_seconds)

    def holds(self, value: float | None) -> bool:
        # No data (mean_confidence of an empty window) never satisfies a condition.
        return value is not None and not math.isnan(value) and OPS[self.op](value, self.threshold)


def relative_change(value: float | None, previous: float | None) -> float | None:
    """(value − previous) / previous; from a previous value of 0 the change is
    infinite when the value is above 0, else 0 (the contract's rule)."""
    if value is None or previous is None:
        return None
    if previous == 0:
        return math.inf if value > 0 else 0.0
    return (value - previous) / previous


def rule_holds(match: str, results: list[bool]) -> bool:
    return any(results) if match == "any" else bool(results) and all(results)


# JSON has no infinity. Inside the database (jsonb refuses the `Infinity`
# token) it is stored as the string below; API answers and webhook bodies carry
# the `Infinity` token, which Python's json (and most lenient parsers) read back
# as a float, so "the change is infinite" stays a number for consumers.
_STORED_INFINITY = "Infinity"


def store_value(value: float | None):
    if value is not None and math.isinf(value):
        return _STORED_INFINITY if value > 0 else "-" + _STORED_INFINITY
    return value


def load_value(value):
    if value == _STORED_INFINITY:
        return math.inf
    if value == "-" + _STORED_INFINITY:
        return -math.inf
    return value


def load_values(values: list[dict]) -> list[dict]:
    return [{**entry, "value": load_value(entry.get("value"))} for entry in values]
