"""What a read of the metrics asks: a window, its filters, its series step
and the dimension it is split by (Question), and the UTC-aligned buckets that
cuts the window into."""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from core.timestamps import utc_iso
from metrics import catalog
from metrics.catalog import METRICS
from metrics.rollups.schema import DIMENSIONS
from metrics.rollups.values import DEFAULT_ENVIRONMENT


@dataclass(frozen=True)
class Filters:
    """Which nodes a figure counts: the rollup dimensions that are set, the
    node's model when set, and always one environment (the trace's:
    `production` unless asked, per the contract's "Environments"). A text
    filter is one exact value (the API's, an alert's), or a tuple of two or
    more values any of which matches (a page's typed prefix, resolved by
    core.filter_values): metrics.filter_match reads both."""

    agent_id: str | tuple[str, ...] = ""
    step: str | tuple[str, ...] = ""
    source_type: str | tuple[str, ...] = ""
    round: int | None = None
    model: str | tuple[str, ...] = ""
    environment: str = DEFAULT_ENVIRONMENT

    @property
    def dimensions(self) -> dict:
        """The rollup dimensions that are set, as {column: value} (model and
        environment are apart: not every rollup is keyed by them)."""
        values = {"agent_id": self.agent_id, "step": self.step, "source_type": self.source_type}
        chosen = {column: value for column, value in values.items() if value}
        if self.round is not None:
            chosen["round"] = self.round
        return chosen

    @property
    def several(self) -> set[str]:
        """The filters that take several values."""
        values = {"agent_id": self.agent_id, "step": self.step, "source_type": self.source_type, "model": self.model}
        return {name for name, value in values.items() if isinstance(value, tuple)}

    @property
    def in_hour_rollups(self) -> bool:
        """The hour rollups hold production nodes by the rollup dimensions: a
        model or another environment is answered from the raw rows."""
        return not self.model and self.environment == DEFAULT_ENVIRONMENT


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
        return catalog.needs_runs(self.metrics)

    @property
    def needs_traces(self) -> bool:
        return catalog.needs_traces(self.metrics)

    def bucket_key(self, bucket: datetime | None) -> datetime:
        """The key of the bucket starting at `bucket` (None: the whole window):
        buckets are UTC-aligned, except the first, which starts with the window."""
        return self.start if bucket is None else max(bucket, self.start)

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


# One way of writing a moment across the product (core.timestamps).
iso = utc_iso
