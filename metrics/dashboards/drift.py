"""A metric's distribution per day or hour against a baseline window (by
default the period of the same length just before), the population
stability index and the Kolmogorov–Smirnov statistic over time, and which
buckets cross the drift threshold (metrics.stats.drift)."""

from metrics.counts import histograms
from metrics.dashboards.distributions import Grid
from metrics.dashboards.series import bucket_starts, isos
from metrics.params import ChartParams
from metrics.questions import Question, iso
from metrics.stats import drift


def build(project, params: ChartParams, use_rollups: bool = True) -> dict:
    metric = params.metric
    step = "hour" if params.step == "minute" else params.step
    baseline_start, baseline_end = params.baseline or (params.start - params.span, params.start)
    baseline_found = histograms.counts(project, Question(baseline_start, baseline_end, params.filters), metric,
                                       use_rollups)
    baseline = histograms.merged(baseline_found).get(metric, {})
    question = Question(params.start, params.end, params.filters, step)
    found = histograms.counts(project, question, metric, use_rollups)
    starts = bucket_starts(question)
    per_bucket = [found.get((start, None, metric), {}) for start in starts]
    compared = [drift.compare(baseline, bins) for bins in per_bucket]
    grid = Grid.covering([baseline, *per_bucket], metric)
    return {
        "query": params.query(),
        "metric": metric,
        "label": metric or "confidence",
        "step": step,
        "threshold": drift.PSI_THRESHOLD,
        "baseline": {"start": iso(baseline_start), "end": iso(baseline_end), "count": sum(baseline.values()),
                     "shares": shares(baseline, grid, metric)},
        "buckets": isos(starts),
        "count": [c["count"] for c in compared],
        "psi": [c["psi"] for c in compared],
        "ks": [c["ks"] for c in compared],
        "ks_critical": [c["ks_critical"] for c in compared],
        "drifted": [iso(start) for start, c in zip(starts, compared) if c["drifted"]],
        "grid": {"from": grid.starts(), "width": grid.width},
        "shares": [shares(bins, grid, metric) for bins in per_bucket],
    }


def shares(bins: dict[int, int], grid: Grid, metric: str) -> list[float] | None:
    total = sum(bins.values())
    return [n / total for n in grid.counts(bins, metric)] if total else None
