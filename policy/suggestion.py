"""Taking the block threshold Calibration suggests into a new policy version,
after showing what it would cost.

The operating point is chosen on the reviewed answers' ROC (see
metrics/stats/calibration.py) by one of three objectives: Youden's J (the
default), the least expected cost (a missed error against a review), or the
most errors caught within a review budget per day. It is computed again here
from the same reviews the page showed, never taken from the browser, and
refused while the reviews are too few to trust (at least MIN_REVIEWS reviewed
answers with a confidence, at least MIN_EACH of each verdict), or while the
confidence ranks mistakes too poorly to be worth a threshold (AUC below the
line Calibration calls badly calibrated): that signal needs fixing first.

`preview` is the price: on the same reviewed answers, the fuse rate, the
answers fused per day (each a person's review once escalated) and the
incorrect answers let through, at the threshold in force and at the new one.
`apply` writes only the threshold a person confirmed after seeing it.
"""

import copy
from dataclasses import dataclass

from metrics.dashboards import calibration
from metrics.params import ChartParams
from metrics.stats.calibration import UNINFORMATIVE_AUC, cheapest, effect, roc, within_budget
from policy import store
from policy.document import PolicyError, parse_document
from policy.models import PolicySource

MIN_REVIEWS = 30
MIN_EACH = 5
SCOPES = ("profile", "by_agent_type", "by_step")
OBJECTIVES = ("youden", "cost", "budget")


class NoSuggestion(Exception):
    """No threshold is offered; the message says why."""


class TooFewReviews(NoSuggestion):
    pass


class FixSignalFirst(NoSuggestion):
    pass


@dataclass(frozen=True)
class Objective:
    kind: str = "youden"
    cost_miss: float = 10.0  # what an incorrect answer let through costs, in reviews
    cost_review: float = 1.0
    budget: float = 0.0  # reviews a day

    def describe(self) -> str:
        if self.kind == "cost":
            return f"least expected cost (a missed error {self.cost_miss:g}, a review {self.cost_review:g})"
        if self.kind == "budget":
            return f"most errors caught within {self.budget:g} reviews a day"
        return "Youden's J"


def objective_from(query) -> Objective:
    """The objective a form or query string asks for; a PolicyError naming the field otherwise."""
    kind = query.get("objective") or "youden"
    if kind not in OBJECTIVES:
        raise PolicyError({"objective": f"must be one of {', '.join(OBJECTIVES)}"})

    def number(name, default):
        raw = query.get(name)
        if raw in (None, ""):
            return default
        try:
            value = float(raw)
        except ValueError:
            raise PolicyError({name: "must be a number"}) from None
        if not 0 <= value <= 1e9 or value != value:
            raise PolicyError({name: "must be from 0 to 1e9"})
        return value

    found = Objective(kind, number("cost_miss", 10.0), number("cost_review", 1.0), number("budget", 0.0))
    if kind == "budget" and query.get("budget") in (None, ""):
        raise PolicyError({"budget": "name the reviews a day people can take"})
    return found


@dataclass(frozen=True)
class Suggestion:
    block: float
    auc: float
    youden_j: float
    reviews: int
    incorrect: int
    objective: Objective = Objective()
    days: float = 1.0


@dataclass(frozen=True)
class Preview:
    suggestion: Suggestion
    where: str
    before: dict  # effect() at the threshold in force
    after: dict  # effect() at the suggested one


def suggest(project, params: ChartParams, objective: Objective = Objective()) -> Suggestion:
    suggestion, _ = _suggest(project, params, objective)
    return suggestion


def _suggest(project, params: ChartParams, objective: Objective) -> tuple[Suggestion, list]:
    judged, _ = calibration.reviewed(project, params)
    curve = roc(judged)
    count, incorrect = len(judged), sum(not j.correct for j in judged)
    best = curve["best"]
    if count < MIN_REVIEWS or incorrect < MIN_EACH or count - incorrect < MIN_EACH or best is None:
        raise TooFewReviews(
            f"too few reviews to suggest a threshold: {count} reviewed answers with a confidence "
            f"({incorrect} incorrect, {count - incorrect} correct); at least {MIN_REVIEWS} are needed, "
            f"with at least {MIN_EACH} of each verdict"
        )
    auc = curve["auc"]
    if auc < UNINFORMATIVE_AUC:
        raise FixSignalFirst(
            f"fix this signal first: its confidence ranks its mistakes poorly (ROC AUC {auc:.3f}, below "
            f"{UNINFORMATIVE_AUC:g}, over {count} reviewed answers), so no threshold on it separates right "
            f"from wrong answers well"
        )
    days = calibration.window_days(params)
    if objective.kind == "cost":
        threshold = cheapest(judged, objective.cost_miss, objective.cost_review)["threshold"]
    elif objective.kind == "budget":
        threshold = within_budget(judged, objective.budget, days)["threshold"]
    else:
        threshold = best["threshold"]
    block = round(min(threshold, 1.0), 3)
    return Suggestion(block, auc, best["youden_j"], count, incorrect, objective, days), judged


def preview(project, params: ChartParams, scope: str, name: str, profile: str,
            objective: Objective = Objective()) -> Preview:
    if scope not in SCOPES:
        raise PolicyError({"scope": f"must be one of {', '.join(SCOPES)}"})
    if scope != "profile" and not name:
        raise PolicyError({"name": f"name the {'agent type' if scope == 'by_agent_type' else 'step'}"})
    suggestion, judged = _suggest(project, params, objective)
    current = store.current(project)
    if profile not in current.profiles:
        raise PolicyError({"profile": f"no profile {profile!r} in version {current.version}"})
    target = current.profiles[profile]
    level = target if scope == "profile" else target[scope].get(name, target)
    where = f"{profile} profile" if scope == "profile" else \
        f"{'agent type' if scope == 'by_agent_type' else 'step'} {name}"
    return Preview(suggestion, where, effect(judged, level["block"], suggestion.days),
                   effect(judged, suggestion.block, suggestion.days))


def apply(project, params: ChartParams, scope: str, name: str, profile: str, changed_by: str,
          confirmed_block: float, objective: Objective = Objective(), at=None, actor=None) -> store.Policy:
    """A new policy version whose block threshold at `scope` (the profile's own,
    agent type `name`, step `name`) is the suggested one, if it is still the
    `confirmed_block` the person saw priced; accept is raised to it if it was
    lower. The note says where the number came from and what it was predicted
    to do. `at` backdates the version (the demo's history)."""
    seen = preview(project, params, scope, name, profile, objective)
    suggestion = seen.suggestion
    if abs(suggestion.block - confirmed_block) > 1e-9:
        raise PolicyError({"block": f"the reviews changed since: the suggestion is now {suggestion.block:g}, "
                                    f"not {confirmed_block:g}; check its price again"})
    profiles = copy.deepcopy(store.current(project).profiles)
    target = profiles[profile]
    if scope == "profile":
        level = target
    else:
        level = target[scope].setdefault(name, {"accept": target["accept"], "block": target["block"]})
    level["block"] = suggestion.block
    level["accept"] = max(level["accept"], suggestion.block)
    before, after = seen.before, seen.after
    note = (f"{seen.where}: block {suggestion.block:g} from Calibration ROC (AUC {suggestion.auc:.3f}, "
            f"Youden's J {suggestion.youden_j:.3f}, {suggestion.reviews} reviews, {suggestion.incorrect} incorrect; "
            f"{params.start:%Y-%m-%d %H:%M}–{params.end:%Y-%m-%d %H:%M} UTC"
            f"{''.join(f', {k}={v}' for k, v in params.filters.dimensions.items())}; "
            f"by {suggestion.objective.describe()}); predicted on those reviews: fuse rate "
            f"{_pct(before['fuse_rate'])} → {_pct(after['fuse_rate'])}, incorrect let through "
            f"{before['let_through']} → {after['let_through']} of {after['incorrect']}")
    profiles, note = parse_document({"profiles": profiles, "note": note})
    return store.replace(project, profiles, note, changed_by, PolicySource.CALIBRATION, at=at, actor=actor)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"
