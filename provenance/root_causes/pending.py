"""The stored root causes, refreshed when they are read rather than in the
ingest's request.

An ingest records what it changed (`mark`: one RootCausePending row, in its
own transaction, so the mark commits exactly when the rows it names do).
`drain` refreshes everything marked for a project (provenance.root_causes.store,
in bulk) and removes the marks, in transactions of a bounded number of traces. Every reader of the stored
rows drains first (provenance.root_causes.aggregate.settle), so what it reads
includes every ingest that committed before it asked; the periodic catch-up
drains every project, and with a broker the ingest asks a worker to drain soon
after its commit, so readers seldom find much to do.

Two drains of one project serialise on the marks' row locks: the second waits
for the first to commit, then finds its marks gone and reads what it wrote.
"""

from django.db import DEFAULT_DB_ALIAS, transaction
from django.db.models import Max

from provenance.models import RootCausePending
from provenance.root_causes import store
from tenancy.models import Project


def mark(project: Project, trace_pks, product_ids, unplaced) -> None:
    """Records that these traces, and whatever consumed these products, need
    their root causes refreshed; `unplaced` are the products whose own trace
    is not among `trace_pks` (a fuse decision names a node by product id)."""
    RootCausePending.objects.create(project=project, trace_pks=sorted(trace_pks), product_ids=sorted(product_ids),
                                    unplaced=sorted(unplaced))


# Traces refreshed per transaction of a drain. The refresh holds an advisory
# lock per trace until its transaction commits, and PostgreSQL's lock table is
# small and shared by every session (max_locks_per_transaction × connections,
# 6,400 by default): a backlog of 50,000 traces drained at once ran out of it.
TRACES_PER_TRANSACTION = 1_000


def drain(project: Project) -> int:
    """Refreshes every trace marked for this project when it was called (and
    those downstream of its marked products); returns how many traces that was.
    A large backlog is drained in several transactions, each of which removes
    the marks it refreshed, so one killed half-way leaves the rest marked."""
    # The primary, whatever the request reads from: a mark on a lagging replica could be missed.
    marks = RootCausePending.objects.using(DEFAULT_DB_ALIAS).filter(project=project)
    upto = marks.aggregate(upto=Max("pk"))["upto"]
    drained = 0
    while upto is not None and (batch := _drain_batch(project, marks.filter(pk__lte=upto))) is not None:
        drained += batch
    return drained


def _drain_batch(project: Project, marks) -> int | None:
    """The oldest marks up to about TRACES_PER_TRANSACTION traces (at least one
    mark), refreshed and removed in one transaction; None when none is left."""
    sizes = marks.order_by("pk").values_list("pk", "trace_pks")[:TRACES_PER_TRANSACTION]
    chosen, traced = [], 0
    for pk, trace_pks in sizes:
        if chosen and traced + len(trace_pks) > TRACES_PER_TRANSACTION:
            break
        chosen.append(pk)
        traced += len(trace_pks)
    if not chosen:
        return None
    with transaction.atomic(using=DEFAULT_DB_ALIAS):
        # A concurrent drain that took some of them first has removed them
        # by the time their locks are granted: they are not read again.
        locked = list(marks.select_for_update().filter(pk__in=chosen).order_by("pk")
                      .values_list("pk", "trace_pks", "product_ids", "unplaced"))
        if not locked:
            return 0
        traces, products, unplaced = set(), set(), set()
        for _, trace_pks, product_ids, unplaced_ids in locked:
            traces.update(trace_pks)
            products.update(product_ids)
            unplaced.update(unplaced_ids)
        affected = store.affected_traces(project, traces, products, unplaced)
        store.refresh(project, affected)
        # Through the router: a request that refreshed reads the rest on the primary, where it wrote.
        RootCausePending.objects.filter(project=project, pk__in=[m[0] for m in locked]).delete()
    return len(affected)


def drain_all() -> int:
    """Every project's marks (the periodic catch-up); returns the traces refreshed."""
    project_ids = set(RootCausePending.objects.using(DEFAULT_DB_ALIAS).values_list("project_id", flat=True).distinct())
    return sum(drain(project) for project in Project.objects.filter(pk__in=project_ids))
