"""The fuse loop's metrics: for each window `[start, end)` and its filters,
over the matching nodes

- retry_success_rate: nodes with `retry_of` that are not fused / nodes with
  `retry_of` (None when there is no retry: no data is no success rate); both
  counts are node totals (provenance.vocabulary.RETRIED, RETRIED_OK), so rollups and
  recent rows answer them;
- escalation_rate: escalations in the window (of a node matching the
  filters, when there are filters; metrics.counts.escalations) / distinct
  traces of those nodes (the node totals' traces; 0.0 without traces);
- round_limit_breaches: distinct traces with a node whose `round` exceeds
  `round_limit`, the caller's value (the fuse policy's max_rounds; `metrics`
  never imports the policy; without one, the default policy's), one query
  over the window's nodes.
"""

from django.db.models import Count

from metrics.catalog import Totals
from metrics.counts import escalations
from metrics.questions import Question
from metrics.windows import scan
from metrics.windows.totals import answer
from provenance.vocabulary import DEFAULT_ROUND_LIMIT, OVER_ROUND_LIMIT

FUSE_LOOP_METRICS = ("retry_success_rate", "escalation_rate", "round_limit_breaches")
# The node totals a metric here reads, as the metrics.catalog metrics whose work they need
# (an empty tuple: the additive sums only).
TOTALS_NEEDED = {"retry_success_rate": (), "escalation_rate": ("trace_count",)}


def totals_metrics(metrics) -> tuple[str, ...] | None:
    """The catalog metrics a question must ask for these (None: no node totals needed)."""
    needed = [TOTALS_NEEDED[m] for m in metrics if m in TOTALS_NEEDED]
    return tuple(dict.fromkeys(name for names in needed for name in names)) if needed else None


def window(project, start, end, filters, metrics, round_limit: int | None = None,
           totals: Totals | None = None) -> dict[str, float | None]:
    """`totals`: the window's node totals, asked with totals_metrics(metrics); read here when not given."""
    wanted = [m for m in metrics if m in FUSE_LOOP_METRICS]
    if totals is None and totals_metrics(wanted) is not None:
        [(question, found)] = answer(project, [Question(start, end, filters, metrics=totals_metrics(wanted))])
        totals = found.get((question.start, None), Totals())
    values = {}
    if "retry_success_rate" in wanted:
        values["retry_success_rate"] = totals.retried_ok / totals.retried if totals.retried else None
    if "escalation_rate" in wanted:
        values["escalation_rate"] = (escalations.count(project, start, end, filters) / totals.traces
                                     if totals.traces else 0.0)
    if "round_limit_breaches" in wanted:
        limit = DEFAULT_ROUND_LIMIT if round_limit is None else round_limit
        nodes = scan.matching_nodes(project, start, end, filters)
        values["round_limit_breaches"] = nodes.order_by().aggregate(
            breaches=Count("trace_id", distinct=True, filter=OVER_ROUND_LIMIT.q(max_rounds=limit)))["breaches"]
    return values
