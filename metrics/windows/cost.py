"""The price of certainty's metrics over a window: for each `[start, end)` and
its filters, over the matching nodes that have the value (the others are
left out), from the statistics rollup and the raw rows beside it
(metrics.counts.summaries):

- mean_latency_ms: mean `duration_ms` (None without one);
- p95_latency_ms: its 95th percentile by nearest rank, within 1% (None without one);
- tokens: input plus output tokens, summed (0 without any);
- cost_usd: `cost_usd` summed (0.0 without any);
- cost_per_trace: cost_usd / distinct traces of the matching nodes (the node
  totals' traces; 0.0 without traces).
"""

from metrics.catalog import Totals
from metrics.counts import summaries
from metrics.questions import Question
from metrics.rollups.values import COST, DURATION, TOKENS
from metrics.stats.summary import Distribution
from metrics.windows.totals import answer

COST_METRICS = ("mean_latency_ms", "p95_latency_ms", "tokens", "cost_usd", "cost_per_trace")
# The stored value each metric reads.
VALUE_OF = {"mean_latency_ms": DURATION, "p95_latency_ms": DURATION, "tokens": TOKENS, "cost_usd": COST,
            "cost_per_trace": COST}
TOTALS_NEEDED = {"cost_per_trace": ("trace_count",)}


def totals_metrics(metrics) -> tuple[str, ...] | None:
    """The catalog metrics a question must ask for these (None: no node totals needed)."""
    needed = [TOTALS_NEEDED[m] for m in metrics if m in TOTALS_NEEDED]
    return tuple(dict.fromkeys(name for names in needed for name in names)) if needed else None


def figures(distributions: dict[str, Distribution], metric: str, totals: Totals | None) -> float | None:
    """One metric from the window's distributions (by stored value) and node totals."""
    found = distributions.get(VALUE_OF[metric], Distribution())
    if metric == "mean_latency_ms":
        return found.mean
    if metric == "p95_latency_ms":
        return found.percentile(95)
    total = found.summed
    if metric == "tokens":
        return int(total)
    if metric == "cost_usd":
        return total
    return total / totals.traces if totals is not None and totals.traces else 0.0


def window(project, start, end, filters, metrics, totals: Totals | None = None) -> dict[str, float | None]:
    """`totals`: the window's node totals, asked with totals_metrics(metrics); read here when not given."""
    wanted = [m for m in metrics if m in COST_METRICS]
    if totals is None and totals_metrics(wanted) is not None:
        [(question, found)] = answer(project, [Question(start, end, filters, metrics=totals_metrics(wanted))])
        totals = found.get((question.start, None), Totals())
    stored = tuple(dict.fromkeys(VALUE_OF[m] for m in wanted))
    found = summaries.distributions(project, start, end, filters, stored)
    distributions = {value: found.get((start, None, value), Distribution()) for value in stored}
    return {metric: figures(distributions, metric, totals) for metric in wanted}


def values_by(project, start, end, by: str, filters, metrics, traces: dict | None = None) -> dict:
    """{value of dimension `by`: these metrics over its nodes} for the values
    that have one of the values; `traces`: {value: distinct traces}, for cost_per_trace."""
    wanted = [m for m in metrics if m in COST_METRICS]
    per_value: dict = {}
    stored = tuple(dict.fromkeys(VALUE_OF[m] for m in wanted))
    for (_, value, metric), distribution in summaries.distributions(project, start, end, filters, stored, by=by).items():
        per_value.setdefault(value, {})[metric] = distribution
    return {value: {m: figures(found, m, Totals(traces=(traces or {}).get(value, 0))) for m in wanted}
            for value, found in per_value.items()}
