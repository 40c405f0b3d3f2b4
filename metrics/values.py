"""The one public entry for "values of these metrics over this window": alerts,
the dashboards, the metrics API and the Prometheus exposition all ask here.
What each metric means is in metrics.catalog (and where a new one goes);
what a node counts as, in metrics.rules.

- window_values / many_window_values: metric values per (start, end, filters);
- values_by: metric values per value of a dimension (e.g. per agent);
- answer: grouped Totals per series bucket and dimension value, for charts.
"""

from collections.abc import Iterable
from datetime import datetime

from metrics.catalog import METRICS, Totals, check_metrics
from metrics.questions import Filters, Question
from metrics.windows.totals import answer

__all__ = ["METRICS", "Filters", "Question", "Totals", "answer", "many_window_values", "values_by", "window_values"]


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
    questions = [Question(r[0], r[1], r[2], metrics=m) for r, m in zip(requests, asked)]
    return [found.get((question.start, None), Totals()).values(question.metrics)
            for question, found in answer(project, questions)]


def values_by(project, start: datetime, end: datetime, by: str, filters: Filters = Filters(),
              metrics: Iterable[str] = METRICS) -> dict[object, dict[str, float | None]]:
    """{value of dimension `by`: the metrics over its nodes} for the values that have nodes in the window."""
    question = Question(start, end, filters, by=by, metrics=check_metrics(metrics))
    [(_, found)] = answer(project, [question])
    return {value: totals.values(question.metrics) for (_, value), totals in found.items()}
