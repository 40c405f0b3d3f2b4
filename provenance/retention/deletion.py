"""Deleting traces whose last activity is older than the project's
`trace_days`, with all that belongs to them: nodes, edges, fuse decisions,
reviews, escalations, health findings that name them, and the ingested-event
ids of their events (so an event resent later is stored again, and its trace
simply created anew). Metric rollups keep their counts. The stored root
causes of the traces downstream of those deleted (in other traces, through
cross-trace parents) are recomputed in the same transaction: an answer whose
cause was deleted no longer has it. The audit log is kept
as long as traces are.

A batch of traces is deleted in one transaction of a few statements, children
first; the job repeats batches until none is left, so a run killed halfway is
completed by the next one.
"""

from datetime import datetime

from django.db import transaction
from django.db.models import Exists, OuterRef
from django.db.models.functions import Coalesce

from provenance.models import Edge, Escalation, Fuse, HealthFinding, IngestedEvent, Node, Review, Trace
from provenance.root_causes import store as root_causes
from tenancy.models import AuditEntry, Project

BATCH_TRACES = 500


def last_activity_before(project: Project, cutoff: datetime):
    """The traces to delete: their newest node (or, with none, their creation)
    is older than `cutoff`."""
    return (
        Trace.objects.filter(project=project)
        .annotate(last_activity=Coalesce("ended_at", "created_at"))
        .filter(last_activity__lt=cutoff)
    )


def delete_batch(project: Project, cutoff: datetime, batch: int = BATCH_TRACES) -> tuple[int, int]:
    """Deletes up to `batch` expired traces; returns (traces, nodes) deleted."""
    with transaction.atomic():
        rows = list(last_activity_before(project, cutoff).order_by("pk").values_list("pk", "trace_id")[:batch])
        if not rows:
            return 0, 0
        trace_pks = [pk for pk, _ in rows]
        trace_ids = [trace_id for _, trace_id in rows]
        nodes = Node.objects.filter(project=project, trace_id__in=trace_pks)
        product_ids = list(nodes.values_list("product_id", flat=True))
        downstream = root_causes.affected_traces(project, (), product_ids) - set(trace_pks)
        events = [
            nodes.values("event_id"),
            Fuse.objects.filter(project=project, product_id__in=product_ids).values("event_id"),
            Review.objects.filter(project=project, trace_id__in=trace_pks).values("event_id"),
            Escalation.objects.filter(project=project, trace_id__in=trace_pks).values("event_id"),
        ]
        for event_ids in events:
            IngestedEvent.objects.filter(project=project, event_id__in=event_ids).delete()
        Fuse.objects.filter(project=project, product_id__in=product_ids).delete()
        HealthFinding.objects.filter(project=project, product_id__in=product_ids).delete()
        HealthFinding.objects.filter(project=project, trace_id__in=trace_ids).delete()
        Escalation.objects.filter(project=project, trace_id__in=trace_pks).delete()
        Review.objects.filter(project=project, trace_id__in=trace_pks).delete()
        Edge.objects.filter(project=project, trace_id__in=trace_pks).delete()
        node_count, _ = nodes.delete()
        Trace.objects.filter(pk__in=trace_pks).delete()
        if downstream:
            root_causes.refresh(project, downstream)
        return len(trace_pks), node_count


def sweep_stray_fuses(project: Project) -> int:
    """Fuse decisions about nodes that never arrived, left behind by the traces
    deleted: one anti-join per run rather than a scan per batch."""
    live_trace = Trace.objects.filter(project=project, trace_id=OuterRef("trace_id"))
    stray = Fuse.objects.filter(project=project).exclude(Exists(live_trace))
    IngestedEvent.objects.filter(project=project, event_id__in=stray.values("event_id")).delete()
    deleted, _ = stray.delete()
    return deleted



def delete_audit_entries(project: Project, cutoff: datetime) -> int:
    """Deletes the project's audit entries older than `cutoff` (one statement:
    the log grows with people's changes, not with traffic)."""
    deleted, _ = AuditEntry.objects.filter(project=project, at__lt=cutoff).delete()
    return deleted
