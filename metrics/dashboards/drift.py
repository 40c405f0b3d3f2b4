"""A metric's distribution per bucket against a baseline, the population
stability index and the Kolmogorov–Smirnov statistic over time, and the
verdict: which buckets drifted or deserve a watch, or why there is none.

Bucket width and baseline: metrics.stats.drift_windows (an explicit
`resolution` fixes the width at an hour or a day, an explicit baseline is
used as given); the rule a bucket is judged by: metrics.stats.drift."""

from datetime import datetime, timedelta

from metrics.counts import histograms
from metrics.dashboards.distributions import Grid
from metrics.dashboards.series import isos
from metrics.params import ChartParams
from metrics.questions import Question, iso
from metrics.stats import drift, drift_windows
from metrics.stats.drift_windows import DAY, HOUR, Baseline

FIXED_WIDTHS = {"minute": HOUR, "hour": HOUR, "day": DAY}  # histograms are kept per hour at the finest
# Sub-day buckets scan the nodes raw; whole days come from the day rollups. Past
# three days (where the other charts switch to days too) only whole days: on a
# million nodes a 7-day range in 6-hour buckets took 3.4x as long as in days.
HOURS_UP_TO = timedelta(days=3)


def build(project, params: ChartParams, use_rollups: bool = True) -> dict:
    metric = params.metric
    fixed = FIXED_WIDTHS.get(params.resolution)
    at_least = HOUR if params.span <= HOURS_UP_TO else DAY
    finest = fixed or drift_windows.finest_width(params.start, params.end, at_least)
    base = "hour" if finest < DAY else "day"
    found = histograms.counts(project, Question(params.start, params.end, params.filters, base), metric, use_rollups)
    fine = {start: bins for (start, _, _), bins in found.items()}
    width = fixed or drift_windows.bucket_width(params.start, params.end, fine, at_least)
    grouped = drift_windows.regroup(fine, params.start, width)
    starts = drift_windows.cut(params.start, params.end, width)
    ends = [*starts[1:], params.end]
    per_bucket = [grouped.get(start, {}) for start in starts]
    baseline = choose_baseline(project, params, list(zip(starts, ends, per_bucket)), use_rollups)
    compared = [
        None if baseline.start <= start and end <= baseline.end else drift.compare(baseline.bins, bins)
        for start, end, bins in zip(starts, ends, per_bucket)
    ]
    statuses = [c["status"] if c else "baseline" for c in compared]
    grid = Grid.covering([baseline.bins, *per_bucket], metric)
    return {
        "query": params.query(),
        "metric": metric,
        "label": metric or "confidence",
        "step": base,
        "bucket_seconds": int(width.total_seconds()),
        "rule": {"watch": drift.PSI_WATCH, "drift": drift.PSI_DRIFT, "min_values": drift.MIN_VALUES},
        "verdict": verdict(baseline, statuses),
        "baseline": {"start": iso(baseline.start), "end": iso(baseline.end), "count": baseline.count,
                     "source": baseline.source, "shares": shares(baseline.bins, grid, metric)},
        "buckets": isos(starts),
        "count": [sum(bins.values()) for bins in per_bucket],
        "status": statuses,
        **{key: [c[key] if c else None for c in compared] for key in ("psi", "psi_noise", "ks", "ks_critical")},
        "drifted": [iso(start) for start, s in zip(starts, statuses) if s == "drift"],
        "watch": [iso(start) for start, s in zip(starts, statuses) if s == "watch"],
        "grid": {"from": grid.starts(), "width": grid.width},
        "shares": [shares(bins, grid, metric) for bins in per_bucket],
    }


def choose_baseline(project, params: ChartParams, buckets: list, use_rollups: bool) -> Baseline:
    if params.baseline:
        return Baseline(*params.baseline, bins_over(project, params, *params.baseline, use_rollups), "given")
    before = (params.start - params.span, params.start)
    return drift_windows.choose_baseline(
        Baseline(*before, bins_over(project, params, *before, use_rollups), "before"), buckets)


def bins_over(project, params: ChartParams, start: datetime, end: datetime, use_rollups: bool) -> dict:
    found = histograms.counts(project, Question(start, end, params.filters), params.metric, use_rollups)
    return histograms.merged(found).get(params.metric, {})


def verdict(baseline: Baseline, statuses: list[str]) -> str:
    """"no_baseline" (too few values to compare with), "drift", "watch",
    "stable", or "too_few" (no bucket holds enough values to be judged)."""
    if baseline.count < drift.MIN_VALUES:
        return "no_baseline"
    for found in ("drift", "watch"):
        if found in statuses:
            return found
    return "stable" if {"stable", "noise"} & set(statuses) else "too_few"


def shares(bins: dict[int, int], grid: Grid, metric: str) -> list[float] | None:
    total = sum(bins.values())
    return [n / total for n in grid.counts(bins, metric)] if total else None
