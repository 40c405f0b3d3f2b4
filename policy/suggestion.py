"""Taking the block threshold Calibration suggests (the ROC point of best
Youden's J, see metrics/calibration.py) into a new policy version.

The suggestion is computed again here from the same reviews the page showed,
never taken from the browser, and refused while the reviews are too few to
trust: at least MIN_REVIEWS reviewed answers with a confidence, at least
MIN_EACH of each verdict.
"""

import copy
from dataclasses import dataclass

from metrics.dashboards import calibration
from metrics.params import ChartParams
from policy import store
from policy.document import PolicyError, parse_document
from policy.models import PolicySource

MIN_REVIEWS = 30
MIN_EACH = 5
SCOPES = ("profile", "by_agent_type", "by_step")


class TooFewReviews(Exception):
    pass


@dataclass(frozen=True)
class Suggestion:
    block: float
    auc: float
    youden_j: float
    reviews: int
    incorrect: int


def suggest(project, params: ChartParams) -> Suggestion:
    found = calibration.build(project, params)
    count, incorrect = found["count"], found["incorrect"]
    best = found["roc"]["best"]
    if count < MIN_REVIEWS or incorrect < MIN_EACH or count - incorrect < MIN_EACH or best is None:
        raise TooFewReviews(
            f"too few reviews to suggest a threshold: {count} reviewed answers with a confidence "
            f"({incorrect} incorrect, {count - incorrect} correct); at least {MIN_REVIEWS} are needed, "
            f"with at least {MIN_EACH} of each verdict"
        )
    return Suggestion(round(min(best["threshold"], 1.0), 3), found["roc"]["auc"], best["youden_j"], count, incorrect)


def apply(project, params: ChartParams, scope: str, name: str, profile: str, changed_by: str) -> store.Policy:
    """A new policy version whose block threshold at `scope` (the profile's own,
    agent type `name`, step `name`) is the suggested one; accept is raised to
    it if it was lower."""
    if scope not in SCOPES:
        raise PolicyError({"scope": f"must be one of {', '.join(SCOPES)}"})
    if scope != "profile" and not name:
        raise PolicyError({"name": f"name the {'agent type' if scope == 'by_agent_type' else 'step'}"})
    suggestion = suggest(project, params)
    current = store.current(project)
    profiles = copy.deepcopy(current.profiles)
    if profile not in profiles:
        raise PolicyError({"profile": f"no profile {profile!r} in version {current.version}"})
    target = profiles[profile]
    if scope == "profile":
        level, where = target, f"{profile} profile"
    else:
        level = target[scope].setdefault(name, {"accept": target["accept"], "block": target["block"]})
        where = f"{'agent type' if scope == 'by_agent_type' else 'step'} {name}"
    level["block"] = suggestion.block
    level["accept"] = max(level["accept"], suggestion.block)
    note = (f"{where}: block {suggestion.block:g} from Calibration ROC (AUC {suggestion.auc:.3f}, "
            f"Youden's J {suggestion.youden_j:.3f}, {suggestion.reviews} reviews, {suggestion.incorrect} incorrect; "
            f"{params.start:%Y-%m-%d %H:%M}–{params.end:%Y-%m-%d %H:%M} UTC"
            f"{''.join(f', {k}={v}' for k, v in params.filters.dimensions.items())})")
    profiles, note = parse_document({"profiles": profiles, "note": note})
    return store.replace(project, profiles, note, changed_by, PolicySource.CALIBRATION)
