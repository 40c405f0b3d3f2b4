"""The figures behind every metric: the filters and the totals they derive from."""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

METRICS = (
    "node_count", "trace_count", "mean_confidence", "high_uncertainty_ratio", "fuse_rate",
    "failure_rate", "downweight_rate", "consecutive_fuses",
)


@dataclass(frozen=True)
class Filters:
    agent_id: str = ""
    step: str = ""
    source_type: str = ""
    round: int | None = None

    @property
    def dimensions(self) -> dict:
        """The filters that are set, as {column: value}."""
        values = {"agent_id": self.agent_id, "step": self.step, "source_type": self.source_type}
        chosen = {column: value for column, value in values.items() if value}
        if self.round is not None:
            chosen["round"] = self.round
        return chosen


@dataclass
class Totals:
    """The additive and set-valued figures every metric is derived from."""

    nodes: int = 0
    traces: int = 0
    confidence_count: int = 0
    confidence_sum: float = 0.0
    low_traces: int = 0
    accepted: int = 0
    fused: int = 0
    failed: int = 0
    downweighted: int = 0
    longest_fused_run: int = 0

    def values(self, metrics: Iterable[str] = METRICS) -> dict[str, float | None]:
        every = {
            "node_count": self.nodes,
            "trace_count": self.traces,
            "mean_confidence": self.confidence_sum / self.confidence_count if self.confidence_count else None,
            "high_uncertainty_ratio": self.low_traces / self.traces if self.traces else 0.0,
            "fuse_rate": self.fused / self.nodes if self.nodes else 0.0,
            "failure_rate": self.failed / self.nodes if self.nodes else 0.0,
            "downweight_rate": self.downweighted / self.nodes if self.nodes else 0.0,
            "consecutive_fuses": self.longest_fused_run,
        }
        return {name: every[name] for name in metrics}


def check_metrics(metrics: Iterable[str]) -> tuple[str, ...]:
    metrics = tuple(metrics)
    unknown = [name for name in metrics if name not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s): {', '.join(unknown)}")
    return metrics


DIMENSIONS = ("agent_id", "step", "source_type", "round")
STEPS = ("", "minute", "hour", "day")
STEP_SECONDS = {"minute": 60, "hour": 3600, "day": 86400}


@dataclass(frozen=True)
class Question:
    """Totals over [start, end) of the nodes matching `filters`: one per
    `step` bucket (UTC-aligned; "" is the whole window) and per value of the
    dimension `by` ("" is all together). `metrics` names the metrics the
    caller will read: the work only they need (distinct traces, fused runs)
    is skipped for the others, whose figures are then left incomplete."""

    start: datetime
    end: datetime
    filters: Filters = Filters()
    step: str = ""
    by: str = ""
    metrics: tuple[str, ...] = METRICS

    @property
    def needs_runs(self) -> bool:
        return "consecutive_fuses" in self.metrics

    @property
    def needs_traces(self) -> bool:
        return "trace_count" in self.metrics or "high_uncertainty_ratio" in self.metrics

    def __post_init__(self):
        if self.step not in STEPS:
            raise ValueError(f"step must be one of {STEPS}")
        if self.by and self.by not in DIMENSIONS:
            raise ValueError(f"by must be one of {DIMENSIONS}")


def bucket_floor(moment: datetime, step: str) -> datetime:
    """The UTC-aligned start of the `step` bucket holding `moment`."""
    seconds = STEP_SECONDS[step]
    epoch = int(moment.timestamp()) // seconds * seconds
    return datetime.fromtimestamp(epoch, UTC)


def buckets(question: Question) -> list[tuple[datetime, datetime]]:
    """The question's buckets as [start, end) pairs clipped to its window."""
    if not question.step:
        return [(question.start, question.end)] if question.start < question.end else []
    width = timedelta(seconds=STEP_SECONDS[question.step])
    result, edge = [], question.start
    while edge < question.end:
        following = bucket_floor(edge, question.step) + width
        result.append((edge, min(following, question.end)))
        edge = following
    return result


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
