"""The nearest-rank percentile of raw values: the reference every percentile
answered from histograms is held to, and the figure read straight from rows
where there are few enough (an evaluation run's latencies)."""

import math


def nearest_rank(values, p: float) -> float | None:
    """The smallest value with at least p% of the values at or below it; None without values."""
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[max(1, math.ceil(p / 100 * len(ordered))) - 1]
