"""Trace-weighted figures of a window, beside the node-weighted ones: every
trace counts once however many nodes it has, so one long run cannot set
them. Over the traces with a node matching the filters in [start, end)
(their environment's, as every figure):

- traces: how many;
- traces_with_fuse_share: the share of them with at least one fused node;
- mean_trace_fuse_rate: the mean over them of their fused nodes / their nodes;
- mean_trace_confidence: the mean, over the traces with a confidence, of
  their nodes' mean confidence.

One statement over the window's raw rows (grouped per trace, then averaged)."""

from django.db.models import Avg, Count, F, FloatField, Q
from django.db.models.functions import Cast

from metrics.questions import Filters
from metrics.windows.scan import matching_nodes
from provenance.vocabulary import FUSED

FIGURES = ("traces", "traces_with_fuse_share", "mean_trace_fuse_rate", "mean_trace_confidence")


def figures(project, start, end, filters: Filters = Filters()) -> dict:
    per_trace = (matching_nodes(project, start, end, filters).order_by().values("trace_id")
                 .annotate(n=Count("pk"), fused=Count("pk", filter=FUSED.condition()), confidence=Avg("confidence")))
    found = per_trace.aggregate(
        traces=Count("trace_id"), with_fuse=Count("trace_id", filter=Q(fused__gt=0)),
        mean_rate=Avg(Cast(F("fused"), FloatField()) / Cast(F("n"), FloatField())), mean_confidence=Avg("confidence"))
    traces = found["traces"] or 0
    return {"traces": traces, "traces_with_fuse_share": found["with_fuse"] / traces if traces else None,
            "mean_trace_fuse_rate": found["mean_rate"] if traces else None,
            "mean_trace_confidence": found["mean_confidence"]}
