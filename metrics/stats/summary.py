"""Exact statistics of a distribution kept on the fine grid
(metrics.rollups.values): bins with their count, sums of powers, minimum and
maximum add up across days, groups and raw rows, and give

- count, mean, population standard deviation, minimum, maximum: exact (up to
  floating-point rounding), never from bin midpoints;
- skewness and excess kurtosis (bias-corrected) from the exact moments;
- percentiles by nearest rank: the rank's bin is found exactly, and the
  value is the middle of that bin's smallest and largest value (within 1%,
  or 0.001 on [0, 1]; exact when the bin holds one value);
- whether every value is a whole number (counts such as `samples`, which
  are never called bimodal).
"""

import math
from dataclasses import dataclass, field

from metrics.rollups.values import FIGURES

PERCENTILES = (50, 95, 99)
N, TOTAL, SQ, CUBE, QUAD, MINIMUM, MAXIMUM, FRACTIONAL = range(len(FIGURES))


@dataclass
class Distribution:
    bins: dict = field(default_factory=dict)  # bin -> [n, total, total_sq, total_cube, total_quad, min, max, fractional]

    def add(self, bin_: int, figures) -> None:
        found = self.bins.get(bin_)
        if found is None:
            self.bins[bin_] = [float(f) if i not in (N, FRACTIONAL) else int(f) for i, f in enumerate(figures)]
            return
        for index in (N, TOTAL, SQ, CUBE, QUAD, FRACTIONAL):
            found[index] += figures[index]
        found[MINIMUM] = min(found[MINIMUM], figures[MINIMUM])
        found[MAXIMUM] = max(found[MAXIMUM], figures[MAXIMUM])

    def add_value(self, bin_: int, x: float) -> None:
        self.add(bin_, (1, x, x * x, x * x * x, x * x * x * x, x, x, int(x != math.floor(x))))

    def merge(self, other: "Distribution") -> None:
        for bin_, figures in other.bins.items():
            self.add(bin_, figures)

    def _sum(self, index: int) -> float:
        return sum(figures[index] for figures in self.bins.values())

    @property
    def count(self) -> int:
        return int(self._sum(N))

    @property
    def summed(self) -> float:
        return self._sum(TOTAL)

    @property
    def mean(self) -> float | None:
        count = self.count
        return self._sum(TOTAL) / count if count else None

    def central_moments(self) -> tuple[float, float, float] | None:
        """(m2, m3, m4), population central moments."""
        count = self.count
        if not count:
            return None
        mu = self._sum(TOTAL) / count
        e2, e3, e4 = self._sum(SQ) / count, self._sum(CUBE) / count, self._sum(QUAD) / count
        m2 = max(0.0, e2 - mu * mu)
        m3 = e3 - 3 * mu * e2 + 2 * mu ** 3
        m4 = e4 - 4 * mu * e3 + 6 * mu * mu * e2 - 3 * mu ** 4
        return m2, m3, max(0.0, m4)

    @property
    def std(self) -> float | None:
        """Population standard deviation; 0 for values all equal."""
        moments = self.central_moments()
        if moments is None:
            return None
        if self.minimum == self.maximum:
            return 0.0
        return math.sqrt(moments[0])

    @property
    def minimum(self) -> float | None:
        return min((f[MINIMUM] for f in self.bins.values() if f[N]), default=None)

    @property
    def maximum(self) -> float | None:
        return max((f[MAXIMUM] for f in self.bins.values() if f[N]), default=None)

    @property
    def whole_numbers(self) -> bool:
        """Every value is a whole number (no data: False)."""
        return bool(self.count) and self._sum(FRACTIONAL) == 0

    def percentile(self, percent: int) -> float | None:
        """Nearest rank: the ceil(percent/100 × count)-th smallest value."""
        count = self.count
        if not count:
            return None
        rank = max(1, -(-percent * count // 100))
        seen = 0
        for bin_ in sorted(self.bins):
            figures = self.bins[bin_]
            seen += figures[N]
            if seen >= rank:
                return (figures[MINIMUM] + figures[MAXIMUM]) / 2
        return self.maximum

    def summary(self) -> dict:
        """The contract's figures: count, mean, std, min, max, p50, p95, p99."""
        return {"count": self.count, "mean": self.mean, "std": self.std, "min": self.minimum, "max": self.maximum,
                **{f"p{p}": self.percentile(p) for p in PERCENTILES}}

    def shape(self) -> tuple[float | None, float | None]:
        """(skewness, excess kurtosis), bias-corrected; None under 4 values or without spread."""
        count, moments = self.count, self.central_moments()
        if count < 4 or moments is None or self.std == 0 or moments[0] <= 0:
            return None, None
        m2, m3, m4 = moments
        g1, g2 = m3 / m2 ** 1.5, m4 / m2 ** 2 - 3
        skew = math.sqrt(count * (count - 1)) / (count - 2) * g1
        kurt = (count - 1) / ((count - 2) * (count - 3)) * ((count + 1) * g2 + 6)
        return skew, kurt


@dataclass
class Ranked:
    """A distribution's exact figures (its bins added up into one) and some of
    its percentiles, found where its bins are (metrics.counts.summaries.ranked):
    what a chart of a few percentiles per bucket needs, without the bins."""

    whole: Distribution = field(default_factory=Distribution)
    percentiles: dict = field(default_factory=dict)  # percent -> value

    @classmethod
    def of(cls, distribution: Distribution, percents) -> "Ranked":
        whole = Distribution()
        for figures in distribution.bins.values():
            whole.add(0, figures)
        return cls(whole, {p: distribution.percentile(p) for p in percents})

    @classmethod
    def from_row(cls, row, percents) -> "Ranked":
        """From FIGURES, then the percentiles in `percents` order."""
        whole = Distribution()
        whole.add(0, row[:len(FIGURES)])
        return cls(whole, dict(zip(percents, row[len(FIGURES):], strict=True)))

    @property
    def count(self) -> int:
        return self.whole.count

    @property
    def summed(self) -> float:
        return self.whole.summed

    @property
    def mean(self) -> float | None:
        return self.whole.mean

    def percentile(self, percent: int) -> float | None:
        """Only the percents it was ranked for (KeyError for another)."""
        return self.percentiles[percent] if self.count else None
