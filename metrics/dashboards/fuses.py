"""Fuse decisions per agent and per round (accepted, downweighted, blocked),
the top fuse reasons (by reason code where one was sent), the agents with the
longest runs of fused nodes, what happened after fuses (retry success,
escalations) and the effect of each fuse policy version."""

from metrics import values
from metrics.catalog import Totals
from metrics.counts import fuse_reasons, policy_versions
from metrics.dashboards.series import display_order, label, totals_row
from metrics.params import ChartParams
from metrics.questions import Question
from provenance.vocabulary import DOWNWEIGHTED, FUSED

TOP = 10
# Rounds past this share one bar: a run with 125 rounds would otherwise spread
# a few nodes over a hundred bars and squeeze round 1, where the decisions are.
LAST_ROUND_BAR = 10


def build(project, params: ChartParams, use_rollups: bool = True) -> dict:
    per_agent = Question(params.start, params.end, params.filters, by="agent_id",
                         metrics=("node_count", "fuse_rate", "consecutive_fuses"))
    per_round = Question(params.start, params.end, params.filters, by="round", metrics=("node_count", "fuse_rate"))
    answered = [found for _, found in values.answer(project, [per_agent, per_round], use_rollups=use_rollups)]
    agents = rows(answered[0], per_agent)
    found_reasons = fuse_reasons.counts(project, Question(params.start, params.end, params.filters), use_rollups)
    return {
        "query": params.query(),
        "by_agent": agents,
        "by_round": rows(rounds_bucketed(answered[1]), per_round),
        "top_reasons": top_reasons(found_reasons),
        "consecutive_fuses": sorted(
            ({"agent_id": row["value"], "consecutive_fuses": row["consecutive_fuses"]}
             for row in agents if row["consecutive_fuses"]),
            key=lambda row: (-row["consecutive_fuses"], row["agent_id"]),
        )[:TOP],
        "outcomes": values.window_values(project, params.start, params.end, params.filters,
                                         ("retry_success_rate", "escalation_rate")),
        "by_policy_version": policy_versions.compare(project, params.start, params.end, params.filters, use_rollups),
    }


def rows(found: dict, question: Question) -> list[dict]:
    ordered = sorted(found.items(), key=lambda item: display_order(item[0][1]))
    return [{"value": label(value), **totals_row(totals, question.metrics)} for (_, value), totals in ordered]


def rounds_bucketed(found: dict) -> dict:
    """Rounds above LAST_ROUND_BAR added up under the label "> 10" (the
    figures shown per round, node counts and fuse decisions, add up)."""
    result, beyond = {}, None
    for (bucket, value), totals in found.items():
        if value is None or value <= LAST_ROUND_BAR:
            result[(bucket, value)] = totals
            continue
        if beyond is None:
            beyond = Totals()
        for name in ("nodes", "accepted", "downweighted", "fused", "failed"):
            setattr(beyond, name, getattr(beyond, name) + getattr(totals, name))
        result[(bucket, f"> {LAST_ROUND_BAR}")] = beyond
    return result


def top_reasons(found: dict) -> dict:
    """The most frequent reasons for each of block and downweight."""
    result = {}
    for decision in (FUSED.value, DOWNWEIGHTED.value):
        counted = [(reason, n) for (_, d, reason), n in found.items() if d == decision]
        counted.sort(key=lambda item: (-item[1], item[0]))
        result[decision.label] = [{"reason": reason or "(no reason given)", "count": n} for reason, n in counted[:TOP]]
    return result
