"""Population stability index and Kolmogorov–Smirnov statistic on known
distributions, and the drift dashboard flagging a shifted day."""

import math
import random
from datetime import timedelta

from metrics.rollups.schema import bin_of
from metrics.stats import drift
from tests.conftest import BASE_TIME

DAY = timedelta(days=1)


def grid(values) -> dict[int, int]:
    bins: dict[int, int] = {}
    for value in values:
        bins[bin_of(value)] = bins.get(bin_of(value), 0) + 1
    return bins


def test_the_same_distribution_does_not_drift():
    baseline = grid(random.Random(1).uniform(0, 1) for _ in range(2000))
    result = drift.compare(baseline, dict(baseline))
    assert result["psi"] == 0 and result["ks"] == 0 and not result["drifted"]


def test_psi_of_a_known_shift():
    # Baseline: 100 values in each of ten 0.1-wide bands; current: the lower half empties into the upper.
    baseline = {2 * band: 100 for band in range(10)}
    current = {2 * band: 200 for band in range(5, 10)}
    expected = 5 * (0.2 - 0.1) * math.log(0.2 / 0.1) + 5 * (drift.SHARE_FLOOR - 0.1) * math.log(drift.SHARE_FLOOR / 0.1)
    result = drift.compare(baseline, current)
    assert math.isclose(result["psi"], expected)
    assert result["drifted"] and math.isclose(result["ks"], 0.5)


def test_ks_of_disjoint_distributions_is_one():
    assert drift.ks({2: 50}, {18: 50}) == 1.0
    assert drift.ks_critical(100, 100) == 1.358 * math.sqrt(200 / 10000)


def test_too_few_values_give_no_score():
    assert drift.compare({2: 100}, {2: 5})["psi"] is None


def test_the_dashboard_flags_the_shifted_day(api, ingest):
    rng = random.Random(5)
    events = []
    for day, centre in ((0, 0.8), (1, 0.8), (2, 0.3)):
        for i in range(80):
            events.append({
                "id": f"d{day}-{i}", "type": "node",
                "timestamp": (BASE_TIME + day * DAY + timedelta(minutes=i)).isoformat(),
                "body": {"trace_id": f"t{day}-{i}", "product_id": f"p{day}-{i}", "agent_id": "reasoner",
                         "confidence": min(1, max(0, rng.gauss(centre, 0.05)))},
            })
    ingest(*events)
    day0 = BASE_TIME.replace(hour=0)
    body = api.get("/api/v1/metrics/drift", {
        "start": (day0 + DAY).isoformat(), "end": (day0 + 3 * DAY).isoformat(), "resolution": "day",
        "baseline_start": day0.isoformat(), "baseline_end": (day0 + DAY).isoformat(),
    }).json()
    assert body["buckets"] == ["2026-11-21T00:00:00Z", "2026-11-22T00:00:00Z"]
    assert body["baseline"]["count"] == 80 and body["count"] == [80, 80]
    assert body["psi"][0] < drift.PSI_THRESHOLD < body["psi"][1]
    assert body["drifted"] == ["2026-11-22T00:00:00Z"]
    assert body["ks"][1] > body["ks_critical"][1]
    assert abs(sum(body["shares"][1]) - 1) < 1e-9
