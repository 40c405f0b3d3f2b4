"""The fuse loop's metrics, read from the provenance tables directly (the
retries, escalations and rounds are not in the hour rollups): for each
window `[start, end)` and its filters, over the matching nodes

- retry_success_rate: nodes with `retry_of` that are not fused / nodes with
  `retry_of` (None when there is no retry: no data is no success rate);
- escalation_rate: escalations in the window (of a node matching the
  filters, when there are filters) / distinct traces of those nodes
  (0.0 without traces);
- round_limit_breaches: distinct traces with a node whose `round` exceeds
  `round_limit`, the caller's value (the fuse policy's max_rounds; `metrics`
  never imports the policy).

One query per window for the nodes and one for the escalations; windows
come grouped from the alert tick, so a tick costs a few of them.
"""

from django.db.models import Count, Q

from provenance.models import Escalation, FuseDecision, Node

FUSE_LOOP_METRICS = ("retry_success_rate", "escalation_rate", "round_limit_breaches")
DEFAULT_ROUND_LIMIT = 5  # the contract's version-0 policy


def window(project, start, end, filters, metrics, round_limit: int | None = None) -> dict[str, float | None]:
    wanted = [m for m in metrics if m in FUSE_LOOP_METRICS]
    limit = DEFAULT_ROUND_LIMIT if round_limit is None else round_limit
    nodes = Node.objects.filter(project=project, timestamp__gte=start, timestamp__lt=end, **filters.dimensions)
    counted = {}
    if "retry_success_rate" in wanted:
        retried = ~Q(retry_of="")
        counted["retries"] = Count("pk", filter=retried)
        counted["retries_ok"] = Count("pk", filter=retried & ~Q(fuse_state=FuseDecision.BLOCK))
    if "escalation_rate" in wanted:
        counted["traces"] = Count("trace_id", distinct=True)
    if "round_limit_breaches" in wanted:
        counted["breaches"] = Count("trace_id", distinct=True, filter=Q(round__gt=limit))
    found = nodes.order_by().aggregate(**counted) if counted else {}
    values = {}
    if "retry_success_rate" in wanted:
        values["retry_success_rate"] = found["retries_ok"] / found["retries"] if found["retries"] else None
    if "escalation_rate" in wanted:
        escalations = Escalation.objects.filter(project=project, timestamp__gte=start, timestamp__lt=end)
        if filters.dimensions:
            matching = Node.objects.filter(project=project, **filters.dimensions).values("product_id")
            escalations = escalations.filter(product_id__in=matching)
        values["escalation_rate"] = escalations.count() / found["traces"] if found["traces"] else 0.0
    if "round_limit_breaches" in wanted:
        values["round_limit_breaches"] = found["breaches"]
    return values
