"""Headline figures now against the previous period (node-weighted, with
trace-weighted ones beside them), fuse rate over time per agent,
high-uncertainty ratio over time, and the latest health findings."""

import math

from django.urls import reverse

from metrics import values
from metrics.catalog import METRICS, SUMS, Totals
from metrics.dashboards import legend
from metrics.dashboards.series import bucket_starts, isos, label, pooled_series, series, series_by, volumes
from metrics.params import ChartParams
from metrics.questions import Question, iso
from metrics.windows import trace_weighted
from metrics.windows.dominant import dominant_trace, trace_totals
from provenance.health import latest_report


def build(project, params: ChartParams, use_rollups: bool = True) -> dict:
    span = params.span
    now = Question(params.start, params.end, params.filters)
    before = Question(params.start - span, params.start, params.filters)
    overall = Question(params.start, params.end, params.filters, params.step,
                       metrics=("node_count", "trace_count", "high_uncertainty_ratio", "fuse_rate"))
    per_agent = Question(params.start, params.end, params.filters, params.step, "agent_id", metrics=("fuse_rate",))
    answered = [found for _, found in values.answer(project, [now, before, overall, per_agent], use_rollups=use_rollups)]
    current = answered[0].get((now.start, None), Totals())
    agents, others = legend.split(volumes(answered[3]))
    return {
        "query": params.query(),
        "dominant_trace": dominant(project, params, current),
        # Each trace counted once, beside the node-weighted headline (which a long run can set alone).
        "trace_weighted": trace_weighted.figures(project, params.start, params.end, params.filters, use_rollups),
        "headline": {
            "current": current.values(METRICS),
            "previous": answered[1].get((before.start, None), Totals()).values(METRICS),
            "previous_start": iso(before.start),
        },
        "buckets": isos(bucket_starts(overall)),
        "node_count": series(overall, answered[2], "node_count"),
        "trace_count": series(overall, answered[2], "trace_count"),
        "high_uncertainty_ratio": series(overall, answered[2], "high_uncertainty_ratio"),
        "fuse_rate": series(overall, answered[2], "fuse_rate"),
        # The busiest agents, and the rest as one line at their pooled fuse rate.
        "fuse_rate_by_agent": series_by(per_agent, answered[3], "fuse_rate", only=agents),
        "fuse_rate_others": {"name": legend.others_name(others, "agent_id"), "agents": [label(a) for a in others],
                             "fuse_rate": pooled_series(per_agent, answered[3], others, "fuse_rate")} if others else None,
        "health": latest_health(project),
    }


# A trace holding this share of a window's nodes is called out: node-weighted
# figures then describe mostly that one run.
DOMINANT_SHARE = 0.25
# The node-weighted figures shown again without that trace.
WITHOUT_METRICS = ("node_count", "trace_count", "mean_confidence", "fuse_rate", "failure_rate", "downweight_rate")


def dominant(project, params: ChartParams, current: Totals) -> dict | None:
    """The trace with the most nodes in the window, when it holds DOMINANT_SHARE of them."""
    if not current.nodes or current.traces < 2:
        return None
    # Only traces that could hold the share are looked at (a long run is rare: usually none is).
    found = dominant_trace(project, params.start, params.end, params.filters, math.ceil(DOMINANT_SHARE * current.nodes))
    if found is None:
        return None
    alone = trace_totals(project, params.start, params.end, params.filters, found[0])
    rest = Totals(**{name: getattr(current, name) - getattr(alone, name) for name in SUMS})
    return {"trace_id": found[0], "nodes": found[1], "share": found[1] / current.nodes,
            "url": reverse("provenance:trace-detail", args=[project.slug, found[0]]),
            "without": rest.values(WITHOUT_METRICS)}


def latest_health(project) -> dict:
    """The newest DAG health report's findings."""
    report = latest_report(project)
    if report is None:
        return {"checked_at": None, "findings": 0, "by_kind": {}}
    return {"checked_at": iso(report.checked_at), "findings": report.finding_count, "by_kind": report.counts}
