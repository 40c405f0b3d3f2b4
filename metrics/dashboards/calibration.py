"""Reliability diagram, expected calibration error, Brier score, the ROC of
"confidence below t flags an incorrect answer" with the suggested threshold,
and the correlation of uncertainty with incorrect verdicts (metrics.stats.calibration,
metrics.counts.judged_reviews)."""

from metrics.counts import judged_reviews
from metrics.params import ChartParams
from metrics.stats import calibration


def build(project, params: ChartParams, use_rollups: bool = True) -> dict:
    judged, unscored = reviewed(project, params, use_rollups)
    found = calibration.summary(judged)
    return {"query": params.query(), "unscored_reviews": unscored, **found,
            "signals": calibration.signal_rocs(judged, found["roc"]), "days": window_days(params)}


def window_days(params: ChartParams) -> float:
    """The window's length in days: what "per day" divides by."""
    return (params.end - params.start).total_seconds() / 86400


def reviewed(project, params: ChartParams, use_rollups: bool = True) -> tuple[list, int]:
    """(the reviewed answers with a confidence, the reviews without one) the page judges."""
    return judged_reviews.judged_nodes(project, params.start, params.end, params.filters, use_rollups)
