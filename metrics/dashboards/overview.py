"""Headline figures now against the previous period, fuse rate over time per
agent, high-uncertainty ratio over time, and the latest health findings."""

from metrics import values
from metrics.catalog import METRICS, Totals
from metrics.dashboards.series import bucket_starts, isos, series, series_by
from metrics.params import ChartParams
from metrics.questions import Question, iso
from provenance.health import latest_report


def build(project, params: ChartParams, use_rollups: bool = True) -> dict:
    span = params.span
    now = Question(params.start, params.end, params.filters)
    before = Question(params.start - span, params.start, params.filters)
    overall = Question(params.start, params.end, params.filters, params.step,
                       metrics=("node_count", "trace_count", "high_uncertainty_ratio", "fuse_rate"))
    per_agent = Question(params.start, params.end, params.filters, params.step, "agent_id", metrics=("fuse_rate",))
    answered = [found for _, found in values.answer(project, [now, before, overall, per_agent], use_rollups=use_rollups)]
    return {
        "query": params.query(),
        "headline": {
            "current": answered[0].get((now.start, None), Totals()).values(METRICS),
            "previous": answered[1].get((before.start, None), Totals()).values(METRICS),
            "previous_start": iso(before.start),
        },
        "buckets": isos(bucket_starts(overall)),
        "node_count": series(overall, answered[2], "node_count"),
        "trace_count": series(overall, answered[2], "trace_count"),
        "high_uncertainty_ratio": series(overall, answered[2], "high_uncertainty_ratio"),
        "fuse_rate": series(overall, answered[2], "fuse_rate"),
        "fuse_rate_by_agent": series_by(per_agent, answered[3], "fuse_rate"),
        "health": latest_health(project),
    }


def latest_health(project) -> dict:
    """The newest DAG health report's findings."""
    report = latest_report(project)
    if report is None:
        return {"checked_at": None, "findings": 0, "by_kind": {}}
    return {"checked_at": iso(report.checked_at), "findings": report.finding_count, "by_kind": report.counts}
