"""What the "Why answers go wrong" page shows, from its query parameters:
the ranked causes of the window's wrong answers, each cause's trend, its most
common paths and its blast radius, and a comparison with the previous period
or between two fuse policy versions. Every figure comes from
provenance.root_causes.aggregate, the same reads as `GET /api/v1/root-causes`.

Parameters: `range` (24h, 7d, 30d, 90d; default 7d) ending now, or else
`start` and `end` (ISO 8601); `answers` (incorrect, fused, low_confidence);
`environment` (default production); `model` (the final answer node's);
`agent_id`; `policy_version`; `compare` (`previous`, or `policy` with
`before` and `after` versions).
"""

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from django.utils import timezone

from core import filter_values
from core.params import whole_number
from provenance.ingest.validation import ENVIRONMENT, EventError, parse_timestamp
from provenance.models import DEFAULT_ENVIRONMENT
from provenance.root_causes import aggregate

RANGES = {"24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30), "90d": timedelta(days=90)}
DEFAULT_RANGE = "7d"
DETAILED = 8  # causes shown with their paths and blast radius
TRENDED = 6  # causes drawn in the trend chart
ANSWER_WORDS = {"incorrect": "reviewed incorrect", "fused": "fused", "low_confidence": "below the high-uncertainty "
                "threshold"}


@dataclass
class Choices:
    answers: aggregate.Answers | None = None
    range: str = DEFAULT_RANGE
    compare: str = ""
    before: int | None = None
    after: int | None = None
    errors: dict = field(default_factory=dict)
    known: dict = field(default_factory=dict)  # {"agent_id": [...], "model": [...]} the filters offer
    resolved: dict = field(default_factory=dict)  # what each typed filter became (core.filter_values)


def resolved(project, chosen: Choices) -> Choices:
    """The answering agent and model as typed, resolved against the window's answers' values."""
    known = aggregate.answer_values(project, chosen.answers)
    found = {name: filter_values.resolve(getattr(chosen.answers, name), known[name]) for name in known}
    answers = replace(chosen.answers, **{name: value.filter_value for name, value in found.items()})
    return replace(chosen, answers=answers, known=known, resolved=found)


def _version(params, name: str, errors: dict) -> int | None:
    raw = params.get(name, "")
    if raw == "":
        return None
    try:
        return whole_number(raw)
    except ValueError as error:
        errors[name] = f"a fuse policy version: {error}"
        return None


def choices(params, now: datetime | None = None) -> Choices:
    """The page's choices from its query parameters; `errors` names each bad one."""
    now = now or timezone.now()
    errors: dict[str, str] = {}
    chosen = params.get("range", "")
    start = end = None
    if chosen not in RANGES and (params.get("start") or params.get("end")):
        for name in ("start", "end"):
            try:
                value = parse_timestamp(params.get(name, ""))
            except EventError as error:
                errors[name] = error.message.removeprefix("timestamp: ")
                continue
            start, end = (value, end) if name == "start" else (start, value)
        if start and end and end <= start:
            errors["end"] = "must be after start"
        chosen = ""
    else:
        if chosen and chosen not in RANGES:
            errors["range"] = f"one of {', '.join(RANGES)}"
        chosen = chosen if chosen in RANGES else DEFAULT_RANGE
        end, start = now, now - RANGES[chosen]
    kind = params.get("answers", "incorrect") or "incorrect"
    if kind not in aggregate.ANSWER_KINDS:
        errors["answers"] = f"one of {', '.join(aggregate.ANSWER_KINDS)}"
    policy_version = _version(params, "policy_version", errors)
    environment = params.get("environment", "") or DEFAULT_ENVIRONMENT
    if not ENVIRONMENT.fullmatch(environment):
        errors["environment"] = "1-50 letters, digits, - or _"
    model = params.get("model", "").strip()
    if len(model) > 255:
        errors["model"] = "at most 255 characters"
    agent_id = params.get("agent_id", "").strip()
    if len(agent_id) > 255:
        errors["agent_id"] = "at most 255 characters"
    compare = params.get("compare", "")
    if compare not in ("", "previous", "policy"):
        errors["compare"] = "previous or policy"
    before, after = _version(params, "before", errors), _version(params, "after", errors)
    if compare == "policy" and (before is None or after is None) and not errors.keys() & {"before", "after"}:
        errors["before" if before is None else "after"] = "comparing policy versions needs both before and after"
    if errors:
        return Choices(range=chosen, compare=compare, errors=errors)
    answers = aggregate.Answers(start, end, kind, agent_id, policy_version, environment, model)
    return Choices(answers, chosen, compare, before, after)


def bucket_seconds(answers: aggregate.Answers) -> int:
    return 3600 if answers.end - answers.start <= timedelta(days=2) else 86400


def build(project, chosen: Choices) -> dict:
    """The page's figures for valid choices."""
    answers = chosen.answers
    found = aggregate.causes(project, answers)
    causes = found["causes"]
    for cause in causes[:DETAILED]:
        group = aggregate.Group(cause["agent_id"], cause["step"], cause["reason"])
        cause["paths"] = aggregate.paths(project, answers, group)
        cause["blast"] = aggregate.blast_radius(project, answers, group)
        cause["percent"] = round(cause["share"] * 100, 1)
    for cause in causes[DETAILED:]:
        cause["percent"] = round(cause["share"] * 100, 1)
    groups = [aggregate.Group(c["agent_id"], c["step"], c["reason"]) for c in causes[:TRENDED]]
    trend = aggregate.trend(project, answers, bucket_seconds(answers), groups)
    chart = {
        "buckets": [datetime.fromtimestamp(b, tz=UTC).isoformat() for b in trend["buckets"]],
        "answers": trend["answers"],
        "series": [{"name": f"{g.agent_id} · {g.step or '—'} · {g.reason}",
                    "shares": trend["shares"][(g.agent_id, g.step, g.reason)]} for g in groups],
    }
    comparison = None
    if chosen.compare == "previous":
        width = answers.end - answers.start
        earlier = replace(answers, start=answers.start - width, end=answers.start)
        comparison = {"before_label": "previous period", "after_label": "this period",
                      **aggregate.compare(project, earlier, answers)}
    elif chosen.compare == "policy":
        comparison = {"before_label": f"policy v{chosen.before}", "after_label": f"policy v{chosen.after}",
                      **aggregate.compare(project, replace(answers, policy_version=chosen.before),
                                          replace(answers, policy_version=chosen.after))}
    if comparison:
        for row in comparison["causes"]:
            row["before_percent"], row["after_percent"] = round(row["before"] * 100, 1), round(row["after"] * 100, 1)
            row["change_points"] = round(row["change"] * 100, 1)
    return {"found": found, "causes": causes, "chart": chart, "comparison": comparison,
            "answer_words": ANSWER_WORDS[answers.kind]}
