"""Histograms of confidence and of each reported metric, overall and per
step or agent, each with its shape and a bimodality flag (metrics.stats.bimodality):
bars from the 0.05-grid histograms, figures from the exact statistics
(metrics.counts.summaries)."""

from dataclasses import dataclass

from metrics.counts import histograms, summaries
from metrics.dashboards import legend
from metrics.dashboards.series import display_order, label
from metrics.params import ChartParams
from metrics.questions import Question
from metrics.rollups.schema import BIN_SCALE, BIN_WIDTH, DIMENSIONS, bin_start
from metrics.rollups.schema import CONFIDENCE_METRIC as CONFIDENCE
from metrics.stats import bimodality
from metrics.stats.summary import Distribution

MAX_BARS = 40
ONE = BIN_SCALE  # the bin of a confidence of exactly 1.0
LAST_CONFIDENCE_BIN = ONE - 1
DEFAULT_BY = "step"


def build(project, params: ChartParams, use_rollups: bool = True) -> dict:
    by = params.by if params.by in DIMENSIONS else DEFAULT_BY  # the 0.05-grid histograms have no model
    question = Question(params.start, params.end, params.filters, by=by)
    found = histograms.counts(project, question, use_rollups=use_rollups)
    per_metric: dict = {}
    for (_, value, metric), bins in found.items():
        per_metric.setdefault(metric, {})[value] = bins
    # The shapes need moments, not ranks: added up in the database, for the metrics shown.
    exact = summaries.distributions(project, params.start, params.end, params.filters, tuple(per_metric), by=by,
                                    use_rollups=use_rollups, binned=False) if per_metric else {}
    def exact_of(value, metric: str) -> Distribution:
        return exact.get((params.start, value, metric), Distribution())

    metrics = []
    for metric in sorted(per_metric, key=lambda m: (m != CONFIDENCE, m)):
        groups = per_metric[metric]
        overall: dict[int, int] = {}
        overall_exact = Distribution()
        for value, bins in groups.items():
            for bin_, n in bins.items():
                overall[bin_] = overall.get(bin_, 0) + n
            overall_exact.merge(exact_of(value, metric))
        # The table lists every group; the chart draws the biggest and the rest as one.
        _, pooled = legend.split({value: sum(bins.values()) for value, bins in groups.items()})
        metrics.append({
            "metric": metric,
            "label": metric or "confidence",
            "overall": histogram(overall, metric, overall_exact),
            "groups": [
                {"value": label(value), "charted": value not in pooled,
                 **histogram(bins, metric, exact_of(value, metric))}
                for value, bins in sorted(groups.items(), key=lambda item: display_order(item[0]))
            ],
            "others": others(groups, pooled, metric, exact_of, by),
        })
    return {"query": params.query(), "by": by, "metrics": metrics}


def others(groups: dict, pooled: list, metric: str, exact_of, by: str) -> dict | None:
    """The pooled groups as one histogram: their bins and exact statistics added up."""
    if not pooled:
        return None
    bins: dict[int, int] = {}
    exact = Distribution()
    for value in pooled:
        for bin_, n in groups[value].items():
            bins[bin_] = bins.get(bin_, 0) + n
        exact.merge(exact_of(value, metric))
    return {"value": legend.others_name(pooled, by), "groups": [label(value) for value in pooled],
            **histogram(bins, metric, exact)}


def histogram(bins: dict[int, int], metric: str, exact: Distribution) -> dict:
    """Bars from the 0.05 grid; every figure of the shape but its peaks from the exact statistics."""
    return {"bars": bars(bins, metric), "shape": bimodality.describe(bins, exact).as_dict()}


def bars(bins: dict[int, int], metric: str) -> dict:
    grid = Grid.covering([bins], metric)
    return {"from": grid.starts(), "width": grid.width, "count": grid.counts(bins, metric)}


@dataclass(frozen=True)
class Grid:
    """Display bars over the 0.05 grid, merged `factor` at a time so there are
    at most MAX_BARS; a confidence of exactly 1.0 is shown in the last bar, [0.95, 1]."""

    first: int
    factor: int
    slots: int

    @classmethod
    def covering(cls, histograms: list[dict[int, int]], metric: str) -> "Grid":
        present = [fold(bins, metric) for bins in histograms]
        used = [bin_ for bins in present for bin_ in bins]
        if metric == CONFIDENCE:
            used += [0, LAST_CONFIDENCE_BIN]
        if not used:
            return cls(0, 1, 0)
        low, high = min(used), max(used)
        factor = max(1, -(-(high - low + 1) // MAX_BARS))
        first = low - low % factor
        return cls(first, factor, (high - first) // factor + 1)

    @property
    def width(self) -> float:
        return round(BIN_WIDTH * self.factor, 10)

    def starts(self) -> list[float]:
        return [bin_start(self.first + i * self.factor) for i in range(self.slots)]

    def counts(self, bins: dict[int, int], metric: str) -> list[int]:
        counted = [0] * self.slots
        for bin_, n in fold(bins, metric).items():
            slot = (bin_ - self.first) // self.factor
            if 0 <= slot < self.slots:
                counted[slot] += n
        return counted


def fold(bins: dict[int, int], metric: str) -> dict[int, int]:
    if metric != CONFIDENCE or ONE not in bins:
        return bins
    folded = dict(bins)
    folded[LAST_CONFIDENCE_BIN] = folded.get(LAST_CONFIDENCE_BIN, 0) + folded.pop(ONE)
    return folded
