"""Cost & latency: p50/p95/p99 of duration_ms over time, tokens and cost over
time per agent, step or model, the slowest and the most expensive steps,
and the models that have usage but no price. Every figure comes from the
exact statistics (metrics.counts.summaries), as GET /api/v1/metrics/summary
and the alert metrics do."""

from metrics.counts import summaries, together
from metrics.dashboards import legend
from metrics.dashboards.series import bucket_starts, isos, label
from metrics.params import ChartParams
from metrics.questions import Question
from metrics.rollups.values import COST, DURATION, TOKENS, UNPRICED
from metrics.stats.summary import Distribution

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

    # One statement for every figure: the end days scanned once, not once per figure.
    # Latency's percentiles are ranked in the database (a row per bucket and
    # group, not every bin); tokens and cost need only their sums, added up there too.
    reads = [
        together.Read((DURATION,), step, percents=PERCENTILES),  # 0: latency over time
        together.Read((DURATION,), step, by, percents=(95,)),  # 1: p95 by group
        together.Read((TOKENS, COST), step, by),  # 2: tokens and cost by group
        together.Read((DURATION,), by="step", percents=(95,)),  # 3: the slowest steps
        together.Read((COST,), by="step"),  # 4: the most expensive steps
        together.Read((DURATION,), percents=(95,)),  # 5: totals
        together.Read((TOKENS, COST)),  # 6: totals
        together.Read((UNPRICED,), by="model"),  # 7: unpriced models
        # 8: the groups beyond the legend's, their durations ranked as one.
        together.Read((DURATION,), step, by, percents=(95,), pool_of=1, volume_of=(1, 2), keep=legend.LEGEND_SERIES),
    ]
    answers = together.read(project, params.start, params.end, params.filters, reads, use_rollups)
    over_time = answers[0]
    grouped = split_by_metric({**answers[1], **answers[2]})
    per_step = split_by_metric({**answers[3], **answers[4]})
    whole = split_by_metric({**answers[5], **answers[6]})

    def at(found, start, value, metric) -> Distribution:
        return found.get((question.bucket_key(start) if start is not None else params.start, value, metric),
                         Distribution())

    volumes: dict = {}
    for found in grouped.values():
        for (_, value, _), distribution in found.items():
            volumes[value] = volumes.get(value, 0) + distribution.count
    groups, pooled = legend.split(volumes)
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
        # The rest as one line: tokens and cost added up, p95 ranked over their pooled durations.
        "others": others(project, params, question, by, pooled, grouped, answers[8], use_rollups)
        if pooled else None,
        "slowest_steps": ranked(per_step[DURATION], DURATION, lambda d: d.percentile(95)),
        "expensive_steps": ranked(per_step[COST], COST, lambda d: d.summed),
        "unpriced_models": unpriced_models(answers[7]),
    }


def others(project, params: ChartParams, question: Question, by: str, pooled: list, grouped: dict,
           durations: dict | None, use_rollups: bool) -> dict:
    starts = bucket_starts(question)
    chosen = set(pooled)
    # Their durations ranked as one group in the database, not every bin of
    # every group fetched: read with the rest (the database chooses the
    # groups by the legend's rule), or on their own where it was not (SQLite).
    if durations is None:
        durations = summaries.ranked(project, params.start, params.end, params.filters, (DURATION,), question.step,
                                     by, use_rollups=use_rollups, percents=(95,), pooled=pooled)

    def pooled_at(found: dict, start) -> Distribution:
        merged = Distribution()
        key = question.bucket_key(start)
        for (bucket, value, _), distribution in found.items():
            if bucket == key and value in chosen:
                merged.merge(distribution if isinstance(distribution, Distribution) else distribution.whole)
        return merged

    return {
        "value": legend.others_name(pooled, by),
        "groups": [label(value) for value in pooled],
        "p95_latency_ms": [durations.get((question.bucket_key(s), None, DURATION), Distribution()).percentile(95)
                           for s in starts],
        "tokens": [int(pooled_at(grouped[TOKENS], s).summed) for s in starts],
        "cost_usd": [pooled_at(grouped[COST], s).summed for s in starts],
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


def unpriced_models(found: dict) -> list[dict]:
    """Models with token usage and no cost in the window (no price in the
    project's table when they arrived), from the statistics rollup's
    unpriced tokens by model (not a scan of the window's nodes), counted."""
    counted = sorted(((value, d.count) for (_, value, _), d in found.items() if d.count), key=lambda r: (-r[1], r[0]))
    return [{"model": model or "(none)", "nodes": nodes} for model, nodes in counted]
