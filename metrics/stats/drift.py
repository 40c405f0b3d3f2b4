"""How far a distribution moved from a baseline.

- Population stability index over ten buckets cut at the baseline's deciles
  (on the 0.05 grid): PSI = Σ (c − b) · ln(c / b) over the buckets' shares,
  each share floored at 0.0001 so an empty bucket stays finite. Drift is
  flagged above PSI_THRESHOLD = 0.2 (the usual reading: < 0.1 stable,
  0.1–0.2 moderate, > 0.2 significant).
- Kolmogorov–Smirnov statistic alongside: the largest gap between the two
  cumulative distributions at the grid's bin edges (exact for the binned
  values, a lower bound of the unbinned statistic), with its 5% critical
  value 1.358 · √((n + m) / (n · m)).
"""

import math

PSI_THRESHOLD = 0.2
SHARE_FLOOR = 1e-4
BUCKETS = 10
KS_COEFFICIENT_5_PERCENT = 1.358
MIN_COUNT = 30


def decile_cuts(baseline: dict[int, int]) -> list[int]:
    """Grid bins at which the baseline's cumulative share passes each decile;
    a value falls in bucket i when its bin is below cuts[i] and not below cuts[i-1]."""
    total = sum(baseline.values())
    cuts, running, target = [], 0, 1
    for bin_ in sorted(baseline):
        running += baseline[bin_]
        while target < BUCKETS and running >= target * total / BUCKETS:
            if not cuts or cuts[-1] != bin_ + 1:
                cuts.append(bin_ + 1)
            target += 1
    return cuts


def bucket_shares(bins: dict[int, int], cuts: list[int]) -> list[float]:
    counts = [0] * (len(cuts) + 1)
    for bin_, n in bins.items():
        index = sum(1 for cut in cuts if bin_ >= cut)
        counts[index] += n
    total = sum(counts)
    return [max(c / total, SHARE_FLOOR) for c in counts]


def psi(baseline: dict[int, int], current: dict[int, int]) -> float | None:
    if not sum(baseline.values()) or not sum(current.values()):
        return None
    cuts = decile_cuts(baseline)
    expected, actual = bucket_shares(baseline, cuts), bucket_shares(current, cuts)
    return sum((a - e) * math.log(a / e) for a, e in zip(actual, expected))


def ks(baseline: dict[int, int], current: dict[int, int]) -> float | None:
    n, m = sum(baseline.values()), sum(current.values())
    if not n or not m:
        return None
    gap = cdf_b = cdf_c = 0.0
    for bin_ in sorted(set(baseline) | set(current)):
        cdf_b += baseline.get(bin_, 0) / n
        cdf_c += current.get(bin_, 0) / m
        gap = max(gap, abs(cdf_b - cdf_c))
    return gap


def ks_critical(n: int, m: int) -> float | None:
    if not n or not m:
        return None
    return KS_COEFFICIENT_5_PERCENT * math.sqrt((n + m) / (n * m))


def compare(baseline: dict[int, int], current: dict[int, int]) -> dict:
    n, m = sum(baseline.values()), sum(current.values())
    enough = n >= MIN_COUNT and m >= MIN_COUNT
    value = psi(baseline, current) if enough else None
    statistic = ks(baseline, current) if enough else None
    critical = ks_critical(n, m) if enough else None
    return {
        "count": m,
        "psi": value,
        "ks": statistic,
        "ks_critical": critical,
        "drifted": value is not None and value > PSI_THRESHOLD,
        "ks_significant": statistic is not None and statistic > critical,
    }
