"""The drift rule on known distributions: PSI and KS, the minimum sample per
bucket, the watch/drift thresholds and the sampling-noise floor."""

import math
import random

from metrics.rollups.schema import bin_of
from metrics.stats import drift


def grid(values) -> dict[int, int]:
    bins: dict[int, int] = {}
    for value in values:
        bins[bin_of(value)] = bins.get(bin_of(value), 0) + 1
    return bins


def draw(seed: int, count: int, centre: float = 0.7, spread: float = 0.15) -> dict[int, int]:
    rng = random.Random(seed)
    return grid(min(0.999, max(0.0, rng.gauss(centre, spread))) for _ in range(count))


def test_the_same_distribution_does_not_drift():
    baseline = grid(random.Random(1).uniform(0, 1) for _ in range(2000))
    result = drift.compare(baseline, dict(baseline))
    assert result["psi"] == 0 and result["ks"] == 0 and result["status"] == "stable"


def test_psi_of_a_known_shift():
    # Baseline: 100 values in each of ten 0.1-wide bands; current: the lower half empties into the upper.
    baseline = {2 * band: 100 for band in range(10)}
    current = {2 * band: 200 for band in range(5, 10)}
    expected = 5 * (0.2 - 0.1) * math.log(0.2 / 0.1) + 5 * (drift.SHARE_FLOOR - 0.1) * math.log(drift.SHARE_FLOOR / 0.1)
    result = drift.compare(baseline, current)
    assert math.isclose(result["psi"], expected)
    assert result["status"] == "drift" and math.isclose(result["ks"], 0.5)


def test_ks_of_disjoint_distributions_is_one():
    assert drift.ks({2: 50}, {18: 50}) == 1.0
    assert drift.ks_critical(100, 100) == 1.358 * math.sqrt(200 / 10000)


def test_a_bucket_below_the_minimum_sample_gets_no_verdict_however_far_it_moved():
    baseline = {2 * band: 100 for band in range(10)}
    moved = {18: drift.MIN_VALUES - 1}
    result = drift.compare(baseline, moved)
    assert result["status"] == "few" and result["psi"] is None and result["ks"] is None
    assert drift.compare({18: drift.MIN_VALUES - 1}, baseline)["status"] == "few"  # nor against a small baseline
    assert drift.compare(baseline, {18: drift.MIN_VALUES})["status"] == "drift"


def test_the_thresholds_are_watch_at_0_1_and_drift_at_0_25():
    assert (drift.PSI_WATCH, drift.PSI_DRIFT) == (0.1, 0.25)
    assert drift.status(0.09, 0.01) == "stable"
    assert drift.status(0.1, 0.01) == "watch"
    assert drift.status(0.249, 0.01) == "watch"
    assert drift.status(0.25, 0.01) == "drift"


def test_a_psi_within_sampling_noise_flags_nothing():
    assert drift.status(0.3, 0.31) == "noise"
    assert drift.status(0.12, 0.2) == "noise"
    # The floor shrinks with the counts: ~0.28 for 100 values against a large baseline, ~0.03 for 1,000.
    large = draw(1, 20_000)
    assert 0.25 < drift.psi_noise(large, draw(2, 100)) < 0.3
    assert drift.psi_noise(large, draw(2, 1000)) < 0.04


def test_equal_distributions_are_not_flagged_at_the_minimum_sample():
    # Pure sampling noise: 100-value buckets from the baseline's own distribution
    # (without the noise floor about a third of them would be "watch").
    baseline = draw(3, 2000)
    statuses = [drift.compare(baseline, draw(seed, drift.MIN_VALUES))["status"] for seed in range(500)]
    assert statuses.count("drift") + statuses.count("watch") <= 5
    assert statuses.count("noise") > 100


def test_a_real_shift_is_flagged_at_the_minimum_sample():
    baseline = draw(3, 2000, centre=0.7)
    assert drift.compare(baseline, draw(4, drift.MIN_VALUES, centre=0.45))["status"] == "drift"
    assert drift.compare(baseline, draw(5, 2000, centre=0.64))["status"] == "watch"
