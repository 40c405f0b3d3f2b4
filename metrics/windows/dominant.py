"""The trace with the most nodes in a window, and its share of them: a long
run (one trace of 5,000 nodes) can outweigh every other trace in node-weighted
figures, and a person reading them should be told.

Trace.node_count (every node of the trace) bounds its nodes in any window,
so traces overlapping the window that could hold enough are read in that
order, and counted exactly, until no trace left can beat the best count."""

from django.db.models import Count

from metrics.catalog import Totals
from metrics.questions import Filters
from metrics.windows.scan import aggregates, matching_nodes
from provenance.models import Trace
from tenancy.colocation import same_project

BATCH = 5
BATCHES = 4


def dominant_trace(project, start, end, filters: Filters = Filters(), at_least: int = 1) -> tuple[str, int] | None:
    """(trace id, its matching nodes in [start, end)) of the trace with the
    most, if it has `at_least` of them; else None. With filters, node_count
    (every node) may bound the matching ones loosely: after BATCHES batches
    without a verdict, the window's matching nodes are grouped by trace instead."""
    overlapping = (Trace.objects.filter(project=project, started_at__lt=end, ended_at__gte=start,
                                        node_count__gte=at_least)
                   .order_by("-node_count", "pk").values_list("pk", "trace_id", "node_count"))
    best = None
    for offset in range(0, BATCH * BATCHES, BATCH):
        batch = list(overlapping[offset:offset + BATCH])
        if not batch or (best is not None and batch[0][2] <= best[1]):
            return best
        names = {pk: name for pk, name, _ in batch}
        counted = (matching_nodes(project, start, end, filters).filter(trace_id__in=names)
                   .order_by().values("trace_id").annotate(n=Count("pk")))
        for row in sorted(counted, key=lambda r: (-r["n"], names[r["trace_id"]])):
            if row["n"] >= at_least and (best is None or row["n"] > best[1]):
                best = (names[row["trace_id"]], row["n"])
    grouped = (matching_nodes(project, start, end, filters).filter(same_project("trace")).order_by().values("trace__trace_id")
               .annotate(n=Count("pk")).filter(n__gte=at_least).order_by("-n", "trace__trace_id")[:1])
    return next(((row["trace__trace_id"], row["n"]) for row in grouped), None)


def trace_totals(project, start, end, filters: Filters, trace_id: str) -> Totals:
    """The node totals of one trace's matching nodes in the window (by the same rules as every total)."""
    found = (matching_nodes(project, start, end, filters).filter(same_project("trace"), trace__trace_id=trace_id)
             .aggregate(**aggregates(project.high_uncertainty_threshold)))
    found["confidence_sum"] = found["confidence_sum"] or 0.0
    return Totals(**found)
