"""Where a window meets the rollups that only ever grow (day histograms,
hour fuse reasons): the whole buckets inside it are read from the rollup
(plus whatever arrived after the watermark), the partial buckets at its ends
are scanned raw."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from metrics.questions import STEP_SECONDS, bucket_floor


@dataclass(frozen=True)
class Split:
    whole: tuple[datetime, datetime] | None  # whole buckets, read from the rollup
    partial: list[tuple[datetime, datetime]]  # partial buckets, scanned raw


def split(start: datetime, end: datetime, grain: str) -> Split:
    first = bucket_floor(start, grain)
    if first < start:
        first += timedelta(seconds=STEP_SECONDS[grain])
    last = bucket_floor(end, grain)
    if first >= last:
        return Split(None, [(start, end)] if start < end else [])
    partial = [(start, first)] if start < first else []
    if last < end:
        partial.append((last, end))
    return Split((first, last), partial)
