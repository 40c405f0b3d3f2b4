"""The periodic catch-up of the stored root causes (provenance.root_causes.store).

Every ingest marks what it changed (provenance.root_causes.pending); this job
drains every project's marks, then finds what no mark named (the rows of an
installation that predates the table, or of one that predates the marks,
whose refresh message was lost): the traces of every node, fuse
decision and review stored since the last run (RootCauseMark), those
downstream of them, and the answers found with another high-uncertainty
threshold than the project's current one. Idempotent: a second run finds
nothing new and changes nothing. The marks move only after the refresh
committed, so a run killed halfway is redone by the next.
"""

from collections import defaultdict

from django.db.models import F, Max
from django.utils import timezone

from provenance.models import FinalAnswer, Fuse, Node, Review, RootCauseMark, Trace
from provenance.root_causes import pending, store
from tenancy.models import Project

BATCH = 5_000


def run() -> int:
    """Refreshes what changed since the last run; returns the traces refreshed."""
    refreshed = pending.drain_all()
    mark = RootCauseMark.objects.first() or RootCauseMark.objects.create()
    upto_node = Node.objects.aggregate(m=Max("pk"))["m"] or 0
    upto_fuse = Fuse.objects.aggregate(m=Max("pk"))["m"] or 0
    upto_review = Review.objects.aggregate(m=Max("pk"))["m"] or 0
    # New nodes, a batch of ids at a time: the first run over a large store
    # does not hold every trace in memory at once.
    start = mark.node_id
    while start < upto_node:
        end = min(start + BATCH, upto_node)
        traces: dict[int, set[int]] = defaultdict(set)
        products: dict[int, list[str]] = defaultdict(list)
        for project_id, trace_pk, product_id in Node.objects.filter(pk__gt=start, pk__lte=end).values_list(
                "project_id", "trace_id", "product_id"):
            traces[project_id].add(trace_pk)
            products[project_id].append(product_id)
        refreshed += _refresh(traces, products)
        start = end
        RootCauseMark.objects.filter(pk=mark.pk).update(node_id=start, updated_at=timezone.now())

    traces, products = defaultdict(set), defaultdict(list)
    for project_id, product_id in Fuse.objects.filter(pk__gt=mark.fuse_id, pk__lte=upto_fuse).values_list(
            "project_id", "product_id"):
        products[project_id].append(product_id)
    for project_id, trace_pk in Review.objects.filter(pk__gt=mark.review_id, pk__lte=upto_review).values_list(
            "project_id", "trace_id"):
        traces[project_id].add(trace_pk)
    # Answers judged with a threshold the project has since changed.
    for project_id, trace_pk in FinalAnswer.objects.exclude(
            threshold=F("project__high_uncertainty_threshold")).values_list("project_id", "trace_id"):
        traces[project_id].add(trace_pk)
    refreshed += _refresh(traces, products)
    RootCauseMark.objects.filter(pk=mark.pk).update(fuse_id=upto_fuse, review_id=upto_review,
                                                    updated_at=timezone.now())
    return refreshed


def rebuild(project: Project) -> int:
    """Every trace of the project, from scratch (the benchmark, a threshold migration)."""
    pks = list(Trace.objects.filter(project=project).order_by("pk").values_list("pk", flat=True))
    store.refresh(project, pks)
    return len(pks)


def _refresh(traces: dict[int, set[int]], products: dict[int, list[str]]) -> int:
    count = 0
    for project in Project.objects.filter(pk__in=set(traces) | set(products)):
        affected = store.affected_traces(project, traces.get(project.pk, ()), products.get(project.pk, ()))
        # Not one transaction for the project: the refresh commits a chunk at a
        # time, so its per-trace locks never pile up (a changed threshold
        # refreshes every answer of the project); the marks move after it.
        store.refresh(project, affected)
        count += len(affected)
    return count
