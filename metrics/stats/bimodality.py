"""The shape of a distribution, and whether it looks bimodal: its exact
statistics (metrics.stats.summary.Distribution: count, mean, population
std, skewness, kurtosis) and its counts on the 0.05 grid (the peaks).

Bimodality is flagged when all hold:
- the values are not all whole numbers: a count such as `clusters` takes a
  few integer values, and two of them are not two modes of a task;
- Sarle's bimodality coefficient b = (g² + 1) / (k + 3(n−1)² / ((n−2)(n−3)))
  exceeds 5/9 ≈ 0.555, the value of a uniform distribution (g: sample skewness,
  k: sample excess kurtosis, both bias-corrected, from the exact moments);
- the histogram, smoothed with a 1-2-1 kernel, has at least two peaks that
  each hold 10% of the highest one, with a dip between them below 80% of the
  lower peak. The coefficient alone also exceeds 5/9 for strongly skewed
  unimodal shapes (confidence piled up near 1), which are not a split task.
At least MIN_COUNT values are needed to flag anything.
"""

from dataclasses import asdict, dataclass

from metrics.stats.summary import Distribution

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


def describe(bins: dict[int, int], exact: Distribution) -> Shape:
    """`bins`: the 0.05-grid counts; `exact`: the same values' Distribution."""
    n = exact.count
    if n == 0:
        return Shape(0, None, None, None, None, None, 0, False)
    skew, kurt = exact.shape()
    coefficient = None
    if skew is not None:
        coefficient = (skew ** 2 + 1) / (kurt + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))
    peaks = count_peaks(bins)
    bimodal = (n >= MIN_COUNT and not exact.whole_numbers and coefficient is not None
               and coefficient > UNIFORM_COEFFICIENT and peaks >= 2)
    return Shape(n, exact.mean, exact.std, skew, kurt, coefficient, peaks, bimodal)


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
