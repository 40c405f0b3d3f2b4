"""Read models of traces and nodes for the API: the filtered trace list, a
trace's nodes with their parents, a trace's final answer and verdict. The
pages' batched reads are in `explorer_reads`."""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery, Sum

from core.timestamps import utc_iso
from provenance import vocabulary
from provenance.ingest.json_limits import clip_depth
from provenance.ingest.validation import MAX_DEPTH
from provenance.models import Edge, Escalation, Fuse, Node, Review, Trace, content_tier
from provenance.vocabulary import FUSED, UNCERTAIN_TRACE, decision_name
from tenancy.models import Project


@dataclass
class TraceFilters:
    # One exact value, or (the pages' resolved prefix) a tuple of values any of which a node may have.
    agent_id: str | tuple[str, ...] = ""
    step: str | tuple[str, ...] = ""
    since: datetime | None = None
    until: datetime | None = None
    has_fused: bool | None = None
    has_low_confidence: bool | None = None
    verdict: str = ""
    search: str = ""
    environment: str = ""


def traces(project: Project, filters: TraceFilters) -> QuerySet:
    """Traces of a project, newest activity first, with per-trace figures."""
    qs = Trace.objects.filter(project=project)
    if filters.environment:
        qs = qs.filter(environment=filters.environment)
    nodes = Node.objects.filter(trace=OuterRef("pk"))
    for column in ("agent_id", "step"):
        wanted = getattr(filters, column)
        if wanted:
            lookup = f"{column}__in" if isinstance(wanted, tuple) else column
            qs = qs.filter(Exists(nodes.filter(**{lookup: wanted})))
    if filters.since:
        qs = qs.filter(ended_at__gte=filters.since)
    if filters.until:
        qs = qs.filter(started_at__lt=filters.until)
    fused = Exists(nodes.filter(FUSED.q()))
    if filters.has_fused is not None:
        qs = qs.filter(fused) if filters.has_fused else qs.exclude(fused)
    low = UNCERTAIN_TRACE.q(threshold=project.high_uncertainty_threshold)
    if filters.has_low_confidence is not None:
        qs = qs.filter(low) if filters.has_low_confidence else qs.exclude(low)
    if filters.verdict:
        qs = qs.filter(Exists(Review.objects.filter(trace=OuterRef("pk"), verdict=filters.verdict)))
    if filters.search:
        qs = qs.filter(
            Q(trace_id__icontains=filters.search)
            | Exists(nodes.filter(product_id=filters.search))
        )
    return qs.order_by("-ended_at", "-pk")


def fused_counts(traces: list[Trace]) -> dict[int, int]:
    """Each trace's fused nodes, by trace pk (absent: none), in one grouped
    query: the list's rows and the trace page count them so."""
    return dict(
        Node.objects.filter(FUSED.q(), project_id=_project_of(traces), trace__in=traces)
        .values("trace")
        .annotate(n=Count("pk"))
        .values_list("trace", "n")
    )


def _project_of(traces: list[Trace]) -> int | None:
    """The one project a page of traces belongs to (None for an empty page)."""
    return traces[0].project_id if traces else None


def fused_count(fuse_states) -> int:
    """`fused_counts` over fuse states already read: the trace page's live
    header reads every node of its trace anyway (its query count is pinned)."""
    fused = FUSED.function("fuse_state")
    return sum(1 for state in fuse_states if fused(state))


def with_fused_counts(page: list[Trace]) -> list[Trace]:
    """Adds `fused_count` to a page of traces."""
    counts = fused_counts(page)
    for trace in page:
        trace.fused_count = counts.get(trace.pk, 0)
    return page


def parents_by_child(trace: Trace) -> dict[str, list[str]]:
    """Parent product ids of each node of the trace, keyed by the child's product id."""
    parents: dict[str, list[str]] = {}
    for child, parent in (
        Edge.objects.filter(project_id=trace.project_id, trace=trace)
        .order_by("child_product_id", "position")
        .values_list("child_product_id", "parent_product_id")
    ):
        parents.setdefault(child, []).append(parent)
    return parents


NODE_SUMMARY_FIELDS = (
    "pk", "product_id", "agent_id", "step", "source_type", "confidence", "confidence_raw", "fuse_state",
    "is_error", "round", "timestamp", "retry_of", "attempt", "summarized_at",
    "duration_ms", "model", "input_tokens", "output_tokens", "cost_usd",
)


def usage_of(input_tokens: int | None, output_tokens: int | None) -> dict | None:
    if input_tokens is None:
        return None
    return {"input_tokens": input_tokens, "output_tokens": output_tokens}


def trace_totals(trace: Trace) -> dict:
    """The trace's `cost_usd` and `tokens` (sums over its nodes that have them;
    null when none has), and `duration_ms`, the sum of its steps' durations."""
    return Node.objects.filter(project_id=trace.project_id, trace=trace).aggregate(
        cost_usd=Sum("cost_usd"), tokens=Sum(F("input_tokens") + F("output_tokens")), duration_ms=Sum("duration_ms"),
    )


def node_summary(row: dict, parent_ids: list[str], trace_id: str) -> dict:
    return {
        "product_id": row["product_id"],
        "trace_id": trace_id,
        "agent_id": row["agent_id"],
        "step": row["step"],
        "source_type": row["source_type"],
        "confidence": row["confidence"],
        "confidence_raw": row["confidence_raw"],
        "fused": FUSED.holds(row),
        "fuse_decision": decision_name(row["fuse_state"]),
        "status": "error" if row["is_error"] else "ok",
        "round": row["round"],
        "parent_ids": parent_ids,
        "timestamp": utc_iso(row["timestamp"]),
        "retry_of": row["retry_of"] or None,
        "attempt": row["attempt"],
        "content_tier": content_tier(row["summarized_at"]),
        "duration_ms": row["duration_ms"],
        "model": row["model"] or None,
        "usage": usage_of(row["input_tokens"], row["output_tokens"]),
        "cost_usd": row["cost_usd"],
    }


def trace_nodes(trace: Trace, node_pks: list[int] | None = None) -> list[dict]:
    """The nodes of a trace in timestamp order, each with its parent ids."""
    parents = parents_by_child(trace)
    rows = Node.objects.filter(project_id=trace.project_id, trace=trace)
    if node_pks is not None:
        rows = rows.filter(pk__in=node_pks)
    return [
        node_summary(row, parents.get(row["product_id"], []), trace.trace_id)
        for row in rows.order_by("timestamp", "pk").values(*NODE_SUMMARY_FIELDS)
    ]


def final_answer(trace: Trace) -> Node | None:
    """The node a trace answered with (provenance.final_answer), or None."""
    final_pk = (Trace.objects.filter(project_id=trace.project_id, pk=trace.pk)
                .annotate(final_pk=vocabulary.final_answer_pk()).values("final_pk"))
    return Node.objects.filter(project_id=trace.project_id, pk=Subquery(final_pk[:1])).first()


def latest_verdict(trace: Trace) -> str | None:
    review = Review.objects.filter(project_id=trace.project_id, trace=trace).order_by("-timestamp", "-pk").first()
    return review.verdict if review else None


def node_in_full(node: Node) -> dict:
    """What one node shows beyond its summary, alike in the API and on the
    trace page: its text and digests, metrics and metadata (clipped to the
    depth the ingest accepts), its fuse decisions and escalations."""
    return {
        "content": node.content,
        "raw_input": node.raw_input,
        "content_tier": node.content_tier,
        "content_sha256": node.content_sha256,
        "raw_input_sha256": node.raw_input_sha256,
        "confidence_scale": node.confidence_scale,
        "metrics": clip_depth(node.metrics, MAX_DEPTH),
        "metadata": clip_depth(node.metadata, MAX_DEPTH),
        "fuses": [fuse_summary(fuse) for fuse in fuses_of(node)],
        "escalations": [escalation_summary(e) for e in escalations_of(node)],
    }


def fuses_of(node: Node) -> QuerySet:
    return Fuse.objects.filter(project=node.project_id, product_id=node.product_id).order_by("timestamp", "pk")


def fuse_summary(fuse: Fuse) -> dict:
    return {
        "decision": fuse.get_decision_display(),
        "reason": fuse.reason,
        "reason_code": fuse.reason_code or None,
        "policy_version": fuse.policy_version,
        "threshold": fuse.threshold,
        "by_agent_id": fuse.by_agent_id,
        "inline": fuse.inline,
        "timestamp": utc_iso(fuse.timestamp),
    }


def escalations_of(node: Node) -> QuerySet:
    return Escalation.objects.filter(project=node.project_id, trace=node.trace_id, product_id=node.product_id).order_by(
        "timestamp", "pk"
    )


def escalation_summary(escalation: Escalation) -> dict:
    return {
        "reason": escalation.reason,
        "by_agent_id": escalation.by_agent_id or None,
        "timestamp": utc_iso(escalation.timestamp),
        "open": escalation.is_open,
        "closed_at": utc_iso(escalation.closed_at),
    }
