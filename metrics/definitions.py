"""The metrics of the contract ("Alert rules" in spec/api-v1.md), in one place.

Every metric is a function of the nodes of a project whose timestamp falls in
`[start, end)` and that match the filters. Alerts and the dashboards both ask
here, so a number means the same everywhere.

- node_count, trace_count (distinct traces among those nodes)
- mean_confidence: mean normalized confidence of the nodes that have one (None if none)
- high_uncertainty_ratio: share of those traces with at least one of those nodes
  below the project's high-uncertainty threshold
- fuse_rate: fused nodes (fuse_state block) / nodes
- failure_rate: nodes fused or with status error / nodes
- downweight_rate: downweighted nodes / nodes
- consecutive_fuses: per agent, its nodes in timestamp order (ties by id), the
  longest run of fused ones in a row; the largest over agents

An empty window has counts 0, ratios 0.0, consecutive_fuses 0 and
mean_confidence None.
"""

from collections.abc import Iterable
from datetime import datetime

from metrics import windows
from metrics.figures import METRICS, Filters, check_metrics

__all__ = ["METRICS", "Filters", "window_values", "many_window_values"]


def window_values(project, start: datetime, end: datetime, filters: Filters = Filters(),
                  metrics: Iterable[str] = METRICS) -> dict[str, float | None]:
    """The metrics over the matching nodes of `project` with start <= timestamp < end."""
    return many_window_values(project, [(start, end, filters)], metrics)[0]


def many_window_values(project, requests: list[tuple], metrics: Iterable[str] = METRICS) -> list[dict[str, float | None]]:
    """`window_values` for many (start, end, filters) at once, sharing the work
    between requests: rollups for whole closed hours, one fetch of the raw rest.
    A request may carry its own metrics as a fourth element, (start, end,
    filters, metrics); work only some metrics need (distinct traces, fused
    runs) is then done only for the requests that ask for them."""
    metrics = check_metrics(metrics)
    asked = [check_metrics(request[3]) if len(request) > 3 else metrics for request in requests]
    found = windows.totals_for(project, [(r[0], r[1], r[2], m) for r, m in zip(requests, asked)])
    return [totals.values(m) for totals, m in zip(found, asked)]
