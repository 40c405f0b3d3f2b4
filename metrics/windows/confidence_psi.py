"""confidence_psi (the contract's "Alert rules"): the population stability index
of confidence between a window and the window of the same length just before
it. Ten fixed bins [0, 0.1) … [0.9, 1.0], each bin's share floored at 0.0001,
PSI = Σ (share_now − share_before) × ln(share_now ÷ share_before); 0 when
either window holds fewer than 100 confidences.

Read from the raw nodes, one grouped statement per window pair: the hourly
rollups hold no confidence bins, and the windows an alert watches are short.
(The drift page's PSI is another measure: bins cut at the baseline's deciles.)"""

import math
from datetime import datetime

from django.db.models import Case, Count, F, IntegerField, Value, When
from django.db.models.functions import Floor, Least

from metrics.questions import Filters
from metrics.windows.scan import matching_nodes

PSI_METRICS = ("confidence_psi",)
BINS = 10
SHARE_FLOOR = 0.0001
MINIMUM = 100


def psi(now: list[int], before: list[int]) -> float:
    """The index between two windows' bin counts."""
    if sum(now) < MINIMUM or sum(before) < MINIMUM:
        return 0.0
    total_now, total_before = sum(now), sum(before)
    value = 0.0
    for count_now, count_before in zip(now, before):
        share_now = max(count_now / total_now, SHARE_FLOOR)
        share_before = max(count_before / total_before, SHARE_FLOOR)
        value += (share_now - share_before) * math.log(share_now / share_before)
    return value


def bin_counts(project, start: datetime, end: datetime, filters: Filters) -> tuple[list[int], list[int]]:
    """Confidences per bin in [start, end) and in the window of the same length before it."""
    before_start = start - (end - start)
    rows = (
        matching_nodes(project, before_start, end, filters).filter(confidence__isnull=False)
        .annotate(current=Case(When(timestamp__gte=start, then=Value(1)), default=Value(0),
                               output_field=IntegerField()),
                  bin=Least(Floor(F("confidence") * BINS), Value(BINS - 1), output_field=IntegerField()))
        .order_by().values_list("current", "bin").annotate(n=Count("pk"))
    )
    now, before = [0] * BINS, [0] * BINS
    for current, index, count in rows:
        # Confidence is normalized to [0, 1]; a value outside is clipped to its end bin.
        (now if current else before)[min(max(int(index), 0), BINS - 1)] += count
    return now, before


def window(project, start: datetime, end: datetime, filters: Filters, names) -> dict[str, float]:
    return {"confidence_psi": psi(*bin_counts(project, start, end, filters))} if "confidence_psi" in names else {}
