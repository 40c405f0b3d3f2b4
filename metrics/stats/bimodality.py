"""The shape of a distribution given as counts on the 0.05 grid, and whether
it looks bimodal.

Bimodality is flagged when both hold:
- Sarle's bimodality coefficient b = (g² + 1) / (k + 3(n−1)² / ((n−2)(n−3)))
  exceeds 5/9 ≈ 0.555, the value of a uniform distribution (g: sample skewness,
  k: sample excess kurtosis, both bias-corrected, from the bin midpoints);
- the histogram, smoothed with a 1-2-1 kernel, has at least two peaks that
  each hold 10% of the highest one, with a dip between them below 80% of the
  lower peak. The coefficient alone also exceeds 5/9 for strongly skewed
  unimodal shapes (confidence piled up near 1), which are not a split task.
At least MIN_COUNT values are needed to flag anything.
"""

import math
from dataclasses import asdict, dataclass

from metrics.rollups.schema import BIN_WIDTH

UNIFORM_COEFFICIENT = 5 / 9
MIN_COUNT = 30
PEAK_SHARE = 0.10
DIP_SHARE = 0.80


@dataclass
class Shape:
    count: int
    mean: float | None
    std: float | None
    skewness: float | None
    kurtosis: float | None
    bimodality_coefficient: float | None
    peaks: int
    bimodal: bool

    def as_dict(self) -> dict:
        return asdict(self)


def midpoints(bins: dict[int, int]) -> list[tuple[float, int]]:
    return [((bin_ + 0.5) * BIN_WIDTH, n) for bin_, n in sorted(bins.items()) if n]


def describe(bins: dict[int, int]) -> Shape:
    points = midpoints(bins)
    n = sum(count for _, count in points)
    if n == 0:
        return Shape(0, None, None, None, None, None, 0, False)
    mean = sum(x * c for x, c in points) / n
    m2 = sum(c * (x - mean) ** 2 for x, c in points) / n
    std = math.sqrt(m2 * n / (n - 1)) if n > 1 else 0.0
    skew = kurt = coefficient = None
    if n > 3 and m2 > 0:
        m3 = sum(c * (x - mean) ** 3 for x, c in points) / n
        m4 = sum(c * (x - mean) ** 4 for x, c in points) / n
        g1, g2 = m3 / m2 ** 1.5, m4 / m2 ** 2 - 3
        skew = math.sqrt(n * (n - 1)) / (n - 2) * g1
        kurt = (n - 1) / ((n - 2) * (n - 3)) * ((n + 1) * g2 + 6)
        coefficient = (skew ** 2 + 1) / (kurt + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))
    peaks = count_peaks(bins)
    bimodal = n >= MIN_COUNT and coefficient is not None and coefficient > UNIFORM_COEFFICIENT and peaks >= 2
    return Shape(n, mean, std, skew, kurt, coefficient, peaks, bimodal)


def count_peaks(bins: dict[int, int]) -> int:
    if not bins:
        return 0
    low, high = min(bins), max(bins)
    raw = [bins.get(b, 0) for b in range(low - 1, high + 2)]
    smooth = [(raw[i - 1] + 2 * raw[i] + raw[i + 1]) / 4 for i in range(1, len(raw) - 1)]
    tallest = max(smooth)
    if tallest <= 0:
        return 0
    peaks = [i for i, h in enumerate(smooth)
             if h >= PEAK_SHARE * tallest
             and h >= (smooth[i - 1] if i > 0 else 0) and h > (smooth[i + 1] if i + 1 < len(smooth) else 0)]
    kept = []
    for index in peaks:
        if kept:
            previous = kept[-1]
            dip = min(smooth[previous:index + 1])
            if dip >= DIP_SHARE * min(smooth[previous], smooth[index]):
                # No real valley: one peak, the taller of the two.
                if smooth[index] > smooth[previous]:
                    kept[-1] = index
                continue
        kept.append(index)
    return len(kept)
