"""Cost & latency: p50/p95/p99 of duration_ms over time, tokens and cost over
time per agent, step or model, the slowest and the most expensive steps,
and the models that have usage but no price. Every figure comes from the
exact statistics (metrics.counts.summaries), as GET /api/v1/metrics/summary
and the alert metrics do."""

from django.db.models import Count

from metrics.counts import summaries
from metrics.dashboards.series import bucket_starts, display_order, isos, label
from metrics.params import ChartParams
from metrics.questions import Question
from metrics.rollups.values import COST, DURATION, TOKENS, orm_narrow
from metrics.stats.summary import Distribution
from provenance.models import Node

TOP = 10
BY_CHOICES = ("agent_id", "step", "model")
DEFAULT_BY = "agent_id"
PERCENTILES = (50, 95, 99)


def build(project, params: ChartParams, use_rollups: bool = True) -> dict:
    by = params.by if params.by in BY_CHOICES else DEFAULT_BY
    # Hours are the finest step the statistics keep apart; a day-long step over long ranges.
    step = "day" if params.step == "day" else "hour"
    question = Question(params.start, params.end, params.filters, step)
    starts = bucket_starts(question)

    def read(metric, binned=True, **kwargs):
        return summaries.distributions(project, params.start, params.end, params.filters, metric,
                                       use_rollups=use_rollups, binned=binned, **kwargs)

    # Latency needs its bins (percentiles); tokens and cost only their sums, added up in the database.
    over_time = read((DURATION,), step=step)
    grouped = split_by_metric({**read((DURATION,), step=step, by=by),
                               **read((TOKENS, COST), False, step=step, by=by)})
    per_step = split_by_metric({**read((DURATION,), by="step"), **read((COST,), False, by="step")})
    whole = split_by_metric({**read((DURATION,)), **read((TOKENS, COST), False)})

    def at(found, start, value, metric) -> Distribution:
        return found.get((question.bucket_key(start) if start is not None else params.start, value, metric),
                         Distribution())

    groups = sorted({value for found in grouped.values() for (_, value, _) in found}, key=display_order)
    return {
        "query": params.query(),
        "by": by,
        "buckets": isos(starts),
        "latency": {f"p{p}": [at(over_time, s, None, DURATION).percentile(p) for s in starts] for p in PERCENTILES},
        "totals": {
            "nodes_timed": at(whole[DURATION], None, None, DURATION).count,
            "mean_latency_ms": at(whole[DURATION], None, None, DURATION).mean,
            "p95_latency_ms": at(whole[DURATION], None, None, DURATION).percentile(95),
            "tokens": int(at(whole[TOKENS], None, None, TOKENS).summed),
            "cost_usd": at(whole[COST], None, None, COST).summed,
        },
        "groups": [{
            "value": label(value),
            "p95_latency_ms": [at(grouped[DURATION], s, value, DURATION).percentile(95) for s in starts],
            "tokens": [int(at(grouped[TOKENS], s, value, TOKENS).summed) for s in starts],
            "cost_usd": [at(grouped[COST], s, value, COST).summed for s in starts],
        } for value in groups],
        "slowest_steps": ranked(per_step[DURATION], DURATION, lambda d: d.percentile(95)),
        "expensive_steps": ranked(per_step[COST], COST, lambda d: d.summed),
        "unpriced_models": unpriced_models(project, params),
    }


def split_by_metric(found: dict) -> dict:
    """{stored metric: the distributions of that metric}."""
    result: dict = {DURATION: {}, TOKENS: {}, COST: {}}
    for key, distribution in found.items():
        result[key[2]][key] = distribution
    return result


def ranked(found: dict, metric: str, key) -> list[dict]:
    rows = [(value, distribution) for (_, value, stored), distribution in found.items() if stored == metric]
    rows.sort(key=lambda item: (-key(item[1]), str(item[0])))
    return [{"step": label(value), "count": d.count, "mean": d.mean, "p95": d.percentile(95), "total": d.summed}
            for value, d in rows[:TOP]]


def unpriced_models(project, params: ChartParams) -> list[dict]:
    """Models with token usage and no cost in the window (no price in the project's table when they arrived)."""
    nodes = Node.objects.filter(project=project, timestamp__gte=params.start, timestamp__lt=params.end,
                                cost_usd__isnull=True, **params.filters.dimensions)
    nodes = orm_narrow(nodes, params.filters).exclude(input_tokens__isnull=True, output_tokens__isnull=True)
    counted = nodes.order_by().values("model").annotate(nodes=Count("pk")).order_by("-nodes", "model")
    return [{"model": row["model"] or "(none)", "nodes": row["nodes"]} for row in counted]
