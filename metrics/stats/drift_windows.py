"""Where the drift page cuts its range and what it compares it with.

- Bucket width (`bucket_width`): the finest of WIDTHS (from `at_least`) that
  cuts the range into at most MAX_BUCKETS buckets, widened (while at least MIN_BUCKETS
  remain) until the typical bucket with data — the median — holds
  drift.MIN_VALUES values, so that most buckets can be judged at all.
- Buckets (`cut`): UTC-aligned on multiples of the width counted from a
  Monday (hours and days as usual, weeks from Monday), except the first,
  which starts with the range.
- Baseline (`choose_baseline`): an explicit one as given; else the earliest
  part of the range with data — from the first bucket with data, at least a
  quarter of the buckets that follow and enough of them to hold
  drift.MIN_VALUES values, at most half (so that something is left to
  compare) — when it holds drift.MIN_VALUES values; else the period of the
  same length just before the range when that does; else whichever holds
  more. The earliest part of the range comes first because it is on the
  page's own charts and is where the reader chose to look from; the period
  before is often an unknown (on the demo it holds an incident, burst-sampled,
  that would make every bucket of a quiet day "drift"). The caller says which
  was chosen, and gives no verdict when it holds fewer than drift.MIN_VALUES.
"""

import statistics
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from metrics.stats.drift import MIN_VALUES

HOUR, DAY = timedelta(hours=1), timedelta(days=1)
WIDTHS = (HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY, 28 * DAY)
MAX_BUCKETS = 48
MIN_BUCKETS = 6
ORIGIN = datetime(1970, 1, 5, tzinfo=UTC)  # a Monday: weeks start on Mondays


def floor(moment: datetime, width: timedelta) -> datetime:
    return ORIGIN + (moment - ORIGIN) // width * width


def cut(start: datetime, end: datetime, width: timedelta) -> list[datetime]:
    """Bucket starts over [start, end)."""
    starts, edge = [], start
    while edge < end:
        starts.append(edge)
        edge = floor(edge, width) + width
    return starts


def regroup(counts: dict[datetime, dict], start: datetime, width: timedelta) -> dict[datetime, dict]:
    """Finer buckets' {start: {bin: n}} summed into buckets of `width`."""
    grouped: dict[datetime, dict] = {}
    for moment, bins in counts.items():
        into = grouped.setdefault(max(floor(moment, width), start), {})
        for bin_, n in bins.items():
            into[bin_] = into.get(bin_, 0) + n
    return grouped


def finest_width(start: datetime, end: datetime, at_least: timedelta = HOUR) -> timedelta:
    return next((w for w in WIDTHS if w >= at_least and len(cut(start, end, w)) <= MAX_BUCKETS), WIDTHS[-1])


def bucket_width(start: datetime, end: datetime, counts: dict[datetime, dict],
                 at_least: timedelta = HOUR) -> timedelta:
    """`counts`: {start: {bin: n}} per finer bucket (hours or days) of the range."""
    width = finest_width(start, end, at_least)
    if not any(counts.values()):
        return width
    for wider in (w for w in WIDTHS if w > width):
        if typical(counts, start, width) >= MIN_VALUES or len(cut(start, end, wider)) < MIN_BUCKETS:
            break
        width = wider
    return width


def typical(counts: dict[datetime, dict], start: datetime, width: timedelta) -> float:
    found = [n for n in (sum(bins.values()) for bins in regroup(counts, start, width).values()) if n]
    return statistics.median(found) if found else 0


@dataclass(frozen=True)
class Baseline:
    start: datetime
    end: datetime
    bins: dict
    source: str  # "given", "before" or "earliest"

    @property
    def count(self) -> int:
        return sum(self.bins.values())


def choose_baseline(before: Baseline, buckets: list[tuple[datetime, datetime, dict]]) -> Baseline:
    """`before`: the period just before the range; `buckets`: the range's
    (start, end, bins) in order."""
    earliest = leading(buckets)
    if earliest is None or (earliest.count < MIN_VALUES and before.count > earliest.count):
        return before
    return earliest


def leading(buckets: list[tuple[datetime, datetime, dict]]) -> Baseline | None:
    first = next((i for i, (_, _, bins) in enumerate(buckets) if bins), None)
    if first is None:
        return None
    rest = len(buckets) - first
    least, most = max(1, rest // 4), max(1, rest // 2)
    bins: dict = {}
    taken = 0
    for _, _, found in buckets[first:first + most]:
        for bin_, n in found.items():
            bins[bin_] = bins.get(bin_, 0) + n
        taken += 1
        if taken >= least and sum(bins.values()) >= MIN_VALUES:
            break
    return Baseline(buckets[first][0], buckets[first + taken - 1][1], bins, "earliest")
