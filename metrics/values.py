"""The one public entry for "values of these metrics over this window": alerts,
the dashboards, the metrics API and the Prometheus exposition all ask here.
What each metric means is in metrics.catalog (and where a new one goes);
what a node counts as, in provenance.vocabulary.

- window_values / many_window_values: metric values per (start, end, filters);
- values_by: metric values per value of a dimension (e.g. per agent);
- answer: grouped Totals per series bucket and dimension value, for charts.
"""

from collections.abc import Iterable
from datetime import datetime

from metrics.catalog import METRICS, Totals, check_metrics
from metrics.counts import summaries
from metrics.questions import Filters, Question
from metrics.rollups.values import stored_metric
from metrics.stats.summary import Distribution
from metrics.windows import confidence_psi, cost, fuse_loop, root_causes
from metrics.windows.confidence_psi import PSI_METRICS
from metrics.windows.cost import COST_METRICS
from metrics.windows.fuse_loop import FUSE_LOOP_METRICS
from metrics.windows.root_causes import ROOT_CAUSE_METRICS
from metrics.windows.totals import answer

__all__ = ["ALL_METRICS", "COST_METRICS", "FUSE_LOOP_METRICS", "METRICS", "Filters", "Question", "Totals", "answer",
           "many_window_values", "summary", "values_by", "window_values"]
# Every metric a window can be asked for: those of the node totals, the fuse
# loop's, read from other tables (metrics.windows.fuse_loop), the price of
# certainty's, read from the statistics rollup (metrics.windows.cost),
# confidence_psi, from the raw confidences (metrics.windows.confidence_psi), and
# root_cause_share, from the stored root causes (metrics.windows.root_causes).
ALL_METRICS = (*METRICS, *FUSE_LOOP_METRICS, *COST_METRICS, *PSI_METRICS, *ROOT_CAUSE_METRICS)
BESIDE_TOTALS = (*FUSE_LOOP_METRICS, *COST_METRICS, *PSI_METRICS, *ROOT_CAUSE_METRICS)


def window_values(project, start: datetime, end: datetime, filters: Filters = Filters(),
                  metrics: Iterable[str] = METRICS, round_limit: int | None = None) -> dict[str, float | None]:
    """The metrics over the matching nodes of `project` with start <= timestamp < end."""
    return many_window_values(project, [(start, end, filters)], metrics, round_limit=round_limit)[0]


def many_window_values(project, requests: list[tuple], metrics: Iterable[str] = METRICS,
                       round_limit: int | None = None) -> list[dict[str, float | None]]:
    """`window_values` for many (start, end, filters) at once, sharing the work
    between requests: rollups for whole closed hours, one fetch of the raw rest.
    A request may carry its own metrics as a fourth element, (start, end,
    filters, metrics); work only some metrics need (distinct traces, fused
    runs) is then done only for the requests that ask for them.
    `round_limit` is the round limit round_limit_breaches counts against
    (the fuse policy's max_rounds, given by the caller)."""
    asked = [tuple(request[3]) if len(request) > 3 else tuple(metrics) for request in requests]
    totals_asked = [check_metrics(m for m in names if m not in BESIDE_TOTALS) for names in asked]
    # The fuse loop's and the cost metrics read node totals too (retries, traces): one question serves all.
    loop_needs = [needs_of(names) for names in asked]
    question_metrics = [None if not m and needs is None else tuple(dict.fromkeys((*m, *(needs or ()))))
                        for m, needs in zip(totals_asked, loop_needs)]
    questions = [Question(r[0], r[1], r[2], metrics=m) for r, m in zip(requests, question_metrics) if m is not None]
    answered = iter(answer(project, questions)) if questions else iter(())
    results = []
    for request, names, totals_names, asked_metrics in zip(requests, asked, totals_asked, question_metrics):
        found, totals = {}, None
        if asked_metrics is not None:
            question, grouped = next(answered)
            totals = grouped.get((question.start, None), Totals())
            found = totals.values(totals_names)
        if any(name in FUSE_LOOP_METRICS for name in names):
            found.update(fuse_loop.window(project, request[0], request[1], request[2], names, round_limit,
                                          totals=totals))
        if any(name in COST_METRICS for name in names):
            found.update(cost.window(project, request[0], request[1], request[2], names, totals=totals))
        if any(name in PSI_METRICS for name in names):
            found.update(confidence_psi.window(project, request[0], request[1], request[2], names))
        if any(name in ROOT_CAUSE_METRICS for name in names):
            found.update(root_causes.window(project, request[0], request[1], request[2], names))
        results.append({name: found[name] for name in names})
    return results


def needs_of(names) -> tuple[str, ...] | None:
    """The catalog metrics the fuse loop's and the cost metrics among `names` need (None: none)."""
    needed = [found for found in (fuse_loop.totals_metrics(names), cost.totals_metrics(names)) if found is not None]
    return tuple(dict.fromkeys(name for names in needed for name in names)) if needed else None


def values_by(project, start: datetime, end: datetime, by: str, filters: Filters = Filters(),
              metrics: Iterable[str] = METRICS) -> dict[object, dict[str, float | None]]:
    """{value of dimension `by`: the metrics over its nodes} for the values
    that have nodes in the window (the node totals' metrics and the cost ones)."""
    metrics = tuple(metrics)
    totals_metrics = check_metrics(m for m in metrics if m not in COST_METRICS)
    costs = [m for m in metrics if m in COST_METRICS]
    if costs and cost.totals_metrics(costs):
        totals_metrics = tuple(dict.fromkeys((*totals_metrics, *cost.totals_metrics(costs))))
    question = Question(start, end, filters, by=by, metrics=totals_metrics)
    [(_, found)] = answer(project, [question])
    result = {value: totals.values(check_metrics(m for m in metrics if m not in COST_METRICS))
              for (_, value), totals in found.items()}
    if costs:
        traces = {value: totals.traces for (_, value), totals in found.items()}
        for value, figures in cost.values_by(project, start, end, by, filters, costs, traces).items():
            result.setdefault(value, {}).update(figures)
    return result


def summary(project, metric: str, start: datetime, end: datetime, filters: Filters = Filters()) -> dict:
    """The distribution of one value (`confidence`, `duration_ms`, `cost_usd`,
    `tokens` or a key of the nodes' `metrics`) over the matching nodes with
    start <= timestamp < end that have it: {"metric", "count", "mean", "std",
    "min", "max", "p50", "p95", "p99"} (metrics.stats.summary)."""
    stored = stored_metric(metric)
    found = summaries.distributions(project, start, end, filters, stored)
    distribution = found.get((start, None, stored), Distribution())
    return {"metric": metric, **distribution.summary()}
