"""What a notification says, before any destination kind shapes it: the rule,
its state, each condition's value against its threshold, and a link. Every
transport renders one of these (alerts/transports/), so a Slack message, an
email and a PagerDuty event always tell the same story as the webhook body."""

import math
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.urls import reverse

from alerts.conditions import RATE_METRICS, load_values

KINDS = ("alert.firing", "alert.resolved", "alert.test", "checks.not_running")


@dataclass(frozen=True)
class Line:
    """One condition: what was compared with what."""

    metric: str
    value: float | None
    op: str = ""
    threshold: float | None = None
    window: str = ""
    relative: bool = False
    filters: dict = field(default_factory=dict)
    holds: bool | None = None

    @property
    def label(self) -> str:
        scope = ", ".join(f"{key}={value}" for key, value in self.filters.items())
        over = f" over {self.window}" if self.window else ""
        change = "change in " if self.relative else ""
        return f"{change}{self.metric}{over}" + (f" ({scope})" if scope else "")

    def shown(self, number: float | None) -> str:
        return format_value(self.metric, number, self.relative)

    @property
    def comparison(self) -> str:
        """`31% > 20%`: the value, the operator, the threshold."""
        if not self.op:
            return self.shown(self.value)
        return f"{self.shown(self.value)} {self.op} {self.shown(self.threshold)}"


def format_value(metric: str, number: float | None, relative: bool = False) -> str:
    if number is None or (isinstance(number, float) and math.isnan(number)):
        return "no data"
    if isinstance(number, float) and math.isinf(number):
        return "+∞" if number > 0 else "−∞"
    if relative:
        return f"{number * 100:+.1f}%"
    if metric in RATE_METRICS:
        return f"{number * 100:.1f}%"
    return f"{number:.4g}"


@dataclass(frozen=True)
class Message:
    kind: str  # one of KINDS
    project: str  # slug
    at: datetime
    rule_id: int | None = None
    rule_name: str = ""
    lines: tuple[Line, ...] = ()
    url: str = ""
    detail: str = ""  # the notice's own sentence (checks.not_running)

    @property
    def state(self) -> str:
        return self.kind.split(".", 1)[1]

    @property
    def title(self) -> str:
        if self.kind == "checks.not_running":
            return f"[Denoise] checks are not running ({self.project})"
        return f"[Denoise] {self.state}: {self.rule_name}"

    @property
    def values(self) -> list[dict]:
        return [{"metric": line.metric, "value": line.value} for line in self.lines]


def site_url(path: str) -> str:
    return settings.SITE_ROOT.rstrip("/") + path


def rule_url(rule) -> str:
    return site_url(reverse("alerts:rule-detail", args=[rule.project.slug, rule.pk]))


def for_rule(kind: str, rule, at: datetime, values: list[dict]) -> Message:
    """A rule's notification: `values` ([{metric, value}], one per condition, in
    order) paired with the rule's conditions for their thresholds."""
    loaded = load_values(values)
    lines = []
    for index, entry in enumerate(loaded):
        condition = rule.conditions[index] if index < len(rule.conditions) else {}
        lines.append(Line(
            metric=entry["metric"], value=entry["value"], op=condition.get("op", ""),
            threshold=condition.get("threshold"), window=condition.get("window", ""),
            relative=condition.get("change") == "relative", filters=dict(condition.get("filters") or {}),
        ))
    return Message(kind, rule.project.slug, at, rule.pk, rule.name, tuple(lines), rule_url(rule))


def checks_not_running(project, at: datetime, detail: str) -> Message:
    return Message("checks.not_running", project.slug, at, detail=detail,
                   url=site_url(reverse("metrics:overview", args=[project.slug])))
