"""Where the drift page cuts its range (bucket width from the range and the
data) and which baseline it compares with."""

from datetime import UTC, datetime, timedelta

from metrics.stats import drift_windows
from metrics.stats.drift import MIN_VALUES
from metrics.stats.drift_windows import DAY, HOUR, Baseline, bucket_width, choose_baseline, cut

START = datetime(2026, 11, 20, 0, 0, tzinfo=UTC)


def hourly(hours: int, per_hour: int, start=START) -> dict:
    return {start + h * HOUR: {10: per_hour} for h in range(hours)}


def buckets(counts: list[int], width=6 * HOUR) -> list:
    return [(START + i * width, START + (i + 1) * width, {10: n} if n else {}) for i, n in enumerate(counts)]


def nothing_before() -> Baseline:
    return Baseline(START - DAY, START, {}, "before")


def test_the_width_gives_at_most_48_buckets_aligned_on_utc():
    busy = 1000
    assert bucket_width(START, START + DAY, hourly(24, busy)) == HOUR
    assert bucket_width(START, START + 7 * DAY, hourly(168, busy)) == 6 * HOUR
    assert bucket_width(START, START + 30 * DAY, {}) == DAY
    assert len(cut(START, START + 90 * DAY, bucket_width(START, START + 90 * DAY, {}))) <= 48
    odd = START + timedelta(hours=1, minutes=17)
    assert cut(odd, odd + 6 * HOUR, 3 * HOUR) == [odd, START + 3 * HOUR, START + 6 * HOUR]


def test_thin_data_widens_the_buckets_until_a_typical_one_can_be_judged():
    # ~42 values an hour (the demo): 3-hour buckets hold ~126.
    assert bucket_width(START, START + DAY, hourly(24, 42)) == 3 * HOUR
    # Never below six buckets, even when that leaves them too small.
    assert bucket_width(START, START + DAY, hourly(24, 2)) == 3 * HOUR


def test_the_earliest_part_of_the_range_with_data_is_the_baseline():
    chosen = choose_baseline(nothing_before(), buckets([0, 0, 60, 70, 80, 90, 100, 110, 120, 130]))
    assert chosen.source == "earliest"
    # From the first bucket with data: a quarter of what follows (2 of 8 buckets), 130 values.
    assert (chosen.start, chosen.end, chosen.count) == (START + 12 * HOUR, START + 24 * HOUR, 130)


def test_the_earliest_baseline_grows_to_the_minimum_sample_but_not_past_half_the_range():
    chosen = choose_baseline(nothing_before(), buckets([30, 30, 30, 30, 30, 30, 30, 30]))
    assert chosen.count == 120 and chosen.end == START + 24 * HOUR
    thin = choose_baseline(nothing_before(), buckets([10] * 8))
    assert thin.count == 40 < MIN_VALUES and thin.end == START + 24 * HOUR


def test_the_period_before_serves_when_the_range_starts_thin():
    before = Baseline(START - DAY, START, {10: 500}, "before")
    assert choose_baseline(before, buckets([5, 5, 5, 5, 500, 500, 500, 500])) == before
    # Whichever is larger when neither reaches the minimum; the caller then gives no verdict.
    small = Baseline(START - DAY, START, {10: 3}, "before")
    assert choose_baseline(small, buckets([5, 5, 5, 5])).source == "earliest"


def test_no_data_anywhere_leaves_the_empty_period_before():
    chosen = choose_baseline(nothing_before(), buckets([0, 0, 0]))
    assert chosen.source == "before" and chosen.count == 0


def test_finer_buckets_regroup_into_wider_ones():
    grouped = drift_windows.regroup({START + h * HOUR: {10: 1, 11: h} for h in range(6)}, START, 3 * HOUR)
    assert grouped == {START: {10: 3, 11: 3}, START + 3 * HOUR: {10: 3, 11: 12}}
