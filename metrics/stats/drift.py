"""How far a distribution moved from a baseline, and whether that means anything.

- Population stability index over ten buckets cut at the baseline's deciles
  (on the 0.05 grid): PSI = Σ (c − b) · ln(c / b) over the buckets' shares,
  each share floored at 0.0001 so an empty bucket stays finite.
- The rule (`compare`): a bucket is judged only when it and the baseline each
  hold at least MIN_VALUES values (ten per decile bucket; below that an empty
  decile alone adds ~0.7 to the PSI and nearly every small bucket "drifts").
  A judged bucket is "drift" at PSI ≥ PSI_DRIFT = 0.25, "watch" at
  PSI ≥ PSI_WATCH = 0.1 (the usual reading: < 0.1 stable, 0.1–0.25 moderate,
  > 0.25 significant), "stable" below. A flag also needs a PSI that
  sampling noise alone does not reach for those counts (else "noise"): with
  k buckets, n baseline and m current values, PSI · nm/(n + m) is about χ²
  with k − 1 degrees of freedom when nothing moved, so the PSI must exceed
  that χ²'s 99.9% quantile times (1/n + 1/m): about 0.28 at m = 100 against
  a large baseline, 0.03 at m = 1,000 ("watch" needs a few hundred values).
- Kolmogorov–Smirnov statistic alongside: the largest gap between the two
  cumulative distributions at the grid's bin edges (exact for the binned
  values, a lower bound of the unbinned statistic), with its 5% critical
  value 1.358 · √((n + m) / (n · m)).
"""

import math

PSI_WATCH = 0.1
PSI_DRIFT = 0.25
MIN_VALUES = 100
SHARE_FLOOR = 1e-4
BUCKETS = 10
KS_COEFFICIENT_5_PERCENT = 1.358
# 99.9% quantiles of χ² by degrees of freedom (one less than the buckets cut).
CHI2_999 = {1: 10.828, 2: 13.816, 3: 16.266, 4: 18.467, 5: 20.515, 6: 22.458, 7: 24.322, 8: 26.124, 9: 27.877}


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


def psi_noise(baseline: dict[int, int], current: dict[int, int]) -> float | None:
    """The PSI that sampling noise alone stays under 999 times in 1,000 for these counts."""
    n, m = sum(baseline.values()), sum(current.values())
    if not n or not m:
        return None
    degrees = max(1, len(decile_cuts(baseline)))
    return CHI2_999[degrees] * (1 / n + 1 / m)


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


def status(value: float | None, noise: float | None) -> str:
    if value is None:
        return "few"
    if value < PSI_WATCH:
        return "stable"
    if value <= noise:
        return "noise"
    return "drift" if value >= PSI_DRIFT else "watch"


def compare(baseline: dict[int, int], current: dict[int, int]) -> dict:
    """The bucket `current` against `baseline` under the rule above; PSI and KS
    are None for a bucket that is not judged ("few")."""
    n, m = sum(baseline.values()), sum(current.values())
    judged = n >= MIN_VALUES and m >= MIN_VALUES
    value = psi(baseline, current) if judged else None
    noise = psi_noise(baseline, current) if judged else None
    statistic = ks(baseline, current) if judged else None
    critical = ks_critical(n, m) if judged else None
    return {
        "count": m,
        "psi": value,
        "psi_noise": noise,
        "ks": statistic,
        "ks_critical": critical,
        "status": status(value, noise),
        "ks_significant": statistic is not None and statistic > critical,
    }
