"""The query parameters every chart and metrics endpoint takes: a time range
(explicit `start`, with `end` or now; else a preset `range` ending at `end` or
now; with none of the three, the last 7 days, or on the pages the range
`fitted` to the project's data), filters (`agent_id`, `step`, `source_type`,
`round`), the series `resolution`, and per chart extras (`by`, `metric`,
`baseline_start`/`baseline_end`). Times are ISO 8601; without an offset, UTC."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone
from rest_framework import serializers

from core.params import TimestampField
from metrics.questions import Filters, bucket_floor, iso
from metrics.rollups.schema import DIMENSIONS
from metrics.rollups.values import DEFAULT_ENVIRONMENT

RANGES = {"1h": timedelta(hours=1), "6h": timedelta(hours=6), "24h": timedelta(days=1),
          "7d": timedelta(days=7), "30d": timedelta(days=30), "90d": timedelta(days=90)}
DEFAULT_RANGE = "7d"
MAX_SPAN = timedelta(days=400)
# The finest series step each span allows, so a chart never has thousands of points.
STEP_LIMITS = {"minute": timedelta(days=1), "hour": timedelta(days=93), "day": MAX_SPAN}


def auto_step(span: timedelta) -> str:
    if span <= timedelta(hours=3):
        return "minute"
    if span <= timedelta(days=3):
        return "hour"
    return "day"


def fitted(oldest: datetime, newest: datetime, now: datetime, compare: bool = True) -> tuple[datetime, datetime, str, str]:
    """The pages' default range for data from `oldest` to `newest`: the longest
    preset up to the usual 7 days whose previous period also lies within the
    data (so "previous" figures and the drift baseline have something to
    show; 1h when the data spans less than 2 hours), ending now, or at the
    end of the newest value's hour when the data stopped before that preset's
    window begins (an idle project still opens on its data). A page that
    compares nothing with a previous period (`compare=False`) takes as much of
    the data as the usual 7 days hold instead: the shortest preset covering it."""
    choose = longest_within if compare else covering
    preset = choose(now - oldest)
    if newest >= now - RANGES[preset]:
        return now - RANGES[preset], now, preset, "now"
    end = min(now, bucket_floor(newest, "hour") + timedelta(hours=1))
    preset = choose(end - oldest)
    return end - RANGES[preset], end, preset, "data"


def covering(data_span: timedelta) -> str:
    usual = [name for name, span in RANGES.items() if span <= RANGES[DEFAULT_RANGE]]
    return next((name for name in usual if RANGES[name] >= data_span), DEFAULT_RANGE)


def longest_within(data_span: timedelta) -> str:
    within = [name for name, span in RANGES.items() if span <= RANGES[DEFAULT_RANGE] and 2 * span <= data_span]
    return within[-1] if within else next(iter(RANGES))


@dataclass(frozen=True)
class ChartParams:
    start: datetime
    end: datetime
    filters: Filters = Filters()
    step: str = "hour"
    range: str = ""
    metric: str = ""
    by: str = ""
    baseline: tuple[datetime, datetime] | None = None
    resolution: str = ""  # as asked; `step` is what was chosen
    # No range asked for on a page: the data's (oldest, newest) it was fitted to, and
    # whether the range ends "now" or at the newest "data".
    fitted_to: tuple[datetime, datetime] | None = None
    fitted: str = ""
    fitted_to_all: bool = False  # fitted to hold the data, not to leave a previous period within it

    @property
    def span(self) -> timedelta:
        return self.end - self.start

    @property
    def previous_in_data(self) -> bool:
        """A fitted range's previous period lies within the data (not so under 2 hours of it)."""
        return bool(self.fitted_to) and self.fitted_to[0] <= self.start - self.span

    def query(self) -> dict:
        """The parameters as the pages echo them back."""
        found = {"start": iso(self.start), "end": iso(self.end), "step": self.step, "range": self.range,
                 **self.filters.dimensions, "environment": self.filters.environment}
        if self.filters.model:
            found["model"] = self.filters.model
        if self.baseline:
            found["baseline_start"], found["baseline_end"] = iso(self.baseline[0]), iso(self.baseline[1])
        return found


# The contract's environment names ("Environments"); blank (a form's "any") is the default.
ENVIRONMENT_NAME = r"^[A-Za-z0-9_-]{0,50}$"


class EnvironmentField(serializers.RegexField):
    def __init__(self):
        super().__init__(ENVIRONMENT_NAME, required=False, allow_blank=True, default=DEFAULT_ENVIRONMENT,
                         error_messages={"invalid": "must be 1-50 letters, digits, - or _"})

    def to_internal_value(self, data):
        return super().to_internal_value(data) or DEFAULT_ENVIRONMENT


def environment_field():
    return EnvironmentField()


def model_field():
    return serializers.CharField(required=False, default="", allow_blank=True, max_length=255)


class ChartParamsSerializer(serializers.Serializer):
    range = serializers.ChoiceField(choices=list(RANGES), required=False)
    start = TimestampField(required=False)
    end = TimestampField(required=False)
    agent_id = serializers.CharField(required=False, default="", allow_blank=True, max_length=255)
    step = serializers.CharField(required=False, default="", allow_blank=True, max_length=255)
    source_type = serializers.CharField(required=False, default="", allow_blank=True, max_length=64)
    round = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=0, max_value=2**31 - 1)
    model = model_field()
    environment = environment_field()
    resolution = serializers.ChoiceField(choices=list(STEP_LIMITS), required=False)
    metric = serializers.CharField(required=False, default="", allow_blank=True, max_length=255)
    by = serializers.ChoiceField(choices=["", *DIMENSIONS, "model"], required=False, default="")
    baseline_start = TimestampField(required=False)
    baseline_end = TimestampField(required=False)

    def to_internal_value(self, data):
        # An empty `round=` from a form means "any round".
        if hasattr(data, "get") and data.get("round") == "":
            data = data.copy()
            data.pop("round")
        return super().to_internal_value(data)

    def validate(self, data):
        # Whole seconds, rounded up: a window that ends "now" holds what was written this very second
        # (a verdict just given counts on the page it leads back to).
        now = self.context.get("now") or (timezone.now() + timedelta(seconds=1)).replace(microsecond=0)
        extent, ends = None, ""
        if not (data.get("start") or data.get("end") or data.get("range")) and "fit_to" in self.context:
            extent = self.context["fit_to"]()
        if extent:
            start, end, preset, ends = fitted(*extent, now, compare=not self.context.get("fit_all"))
        elif data.get("start"):
            start, end, preset = data["start"], data.get("end") or now, ""
        else:
            preset, end = data.get("range", DEFAULT_RANGE), data.get("end") or now
            start = end - RANGES[preset]
        if start >= end:
            raise serializers.ValidationError({"start": "must be before end"})
        if end - start > MAX_SPAN:
            raise serializers.ValidationError({"start": f"the range may span at most {MAX_SPAN.days} days"})
        step = data.get("resolution") or auto_step(end - start)
        if end - start > STEP_LIMITS[step]:
            raise serializers.ValidationError(
                {"resolution": f"{step} is too fine for this range (at most {STEP_LIMITS[step].days} days)"}
            )
        baseline = None
        if data.get("baseline_start") or data.get("baseline_end"):
            if not (data.get("baseline_start") and data.get("baseline_end")):
                raise serializers.ValidationError({"baseline_start": "give both baseline_start and baseline_end"})
            baseline = (data["baseline_start"], data["baseline_end"])
            if baseline[0] >= baseline[1]:
                raise serializers.ValidationError({"baseline_start": "must be before baseline_end"})
        filters = Filters(data["agent_id"], data["step"], data["source_type"], data["round"], data["model"],
                          data["environment"])
        return ChartParams(start, end, filters, step, preset, data["metric"], data["by"], baseline,
                           data.get("resolution", ""), extent, ends, bool(extent and self.context.get("fit_all")))


class SummaryParamsSerializer(serializers.Serializer):
    """GET /api/v1/metrics/summary: one value's distribution over [start, end)."""

    metric = serializers.CharField(max_length=255, help_text="confidence, duration_ms, cost_usd, tokens, "
                                   "or a key of the nodes' metrics objects")
    start = TimestampField()
    end = TimestampField()
    agent_id = serializers.CharField(required=False, default="", allow_blank=True, max_length=255)
    step = serializers.CharField(required=False, default="", allow_blank=True, max_length=255)
    source_type = serializers.CharField(required=False, default="", allow_blank=True, max_length=64)
    model = model_field()
    environment = environment_field()

    def validate(self, data):
        if data["start"] >= data["end"]:
            raise serializers.ValidationError({"start": "must be before end"})
        if data["end"] - data["start"] > MAX_SPAN:
            raise serializers.ValidationError({"start": f"the range may span at most {MAX_SPAN.days} days"})
        data["filters"] = Filters(data["agent_id"], data["step"], data["source_type"], None, data["model"],
                                  data["environment"])
        return data
