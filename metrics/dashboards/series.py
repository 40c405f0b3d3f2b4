"""Turning grouped totals into chart series."""

from metrics.catalog import METRICS, SUMS, Totals
from metrics.questions import Question, buckets, iso


def bucket_starts(question: Question) -> list:
    return [start for start, _ in buckets(question)]


def series(question: Question, found: dict, metric: str) -> list:
    """One value per bucket of `question` (None where the metric is undefined)."""
    empty = Totals().values([metric])[metric]
    return [
        (found[(start, None)].values([metric])[metric] if (start, None) in found else empty)
        for start in bucket_starts(question)
    ]


def series_by(question: Question, found: dict, metric: str, only: list | None = None) -> dict:
    """{group value: one value per bucket}; buckets where a group had no node
    are None. `only`: just these groups."""
    values = sorted({value for _, value in found} if only is None else set(only), key=lambda v: (v is None, str(v)))
    starts = bucket_starts(question)
    return {
        label(value): [found[(s, value)].values([metric])[metric] if (s, value) in found else None for s in starts]
        for value in values
    }


def pooled_series(question: Question, found: dict, values: list, metric: str) -> list:
    """One value per bucket for the groups `values` taken as one: their
    counts added up, then the metric of the sums (a pooled rate, not a sum of
    rates); None where none of them had a node. For node-weighted metrics:
    the groups' trace counts would count a trace once per group."""
    chosen = set(values)
    pooled: dict = {}
    for (start, value), totals in found.items():
        if value in chosen:
            into = pooled.setdefault(start, Totals())
            for name in SUMS:
                setattr(into, name, getattr(into, name) + getattr(totals, name))
    return [pooled[s].values([metric])[metric] if s in pooled else None for s in bucket_starts(question)]


def volumes(found: dict, count=lambda totals: totals.nodes) -> dict:
    """{group value: its nodes over every bucket} from grouped Totals."""
    result: dict = {}
    for (_, value), totals in found.items():
        result[value] = result.get(value, 0) + count(totals)
    return result


def label(value) -> str:
    return "(none)" if value in (None, "") else str(value)


def display_order(value) -> tuple:
    """How a chart orders its groups: rounds 1, 2, 10 as numbers (not 1, 10,
    2 as text), names alphabetically after them, no value last."""
    text = str(value)
    number = text.isascii() and (text.isdigit() or (text.startswith("-") and text[1:].isdigit()))
    return (value is None, not number, int(text) if number else 0, text)


def totals_row(totals: Totals, metrics=METRICS) -> dict:
    return {**totals.values(metrics), "accepted": totals.accepted, "downweighted": totals.downweighted,
            "fused": totals.fused, "unjudged": totals.nodes - totals.accepted - totals.downweighted - totals.fused}


def isos(moments) -> list[str]:
    return [iso(m) for m in moments]
