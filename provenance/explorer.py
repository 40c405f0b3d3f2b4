"""What the trace explorer shows: list rows, the graph with its layout, a node's
details, its root causes and its blast radius, as plain data for the pages,
their JSON endpoints and the live updates.

Every function takes the project the requester may see and only reads through
it. Agent-supplied strings pass through untouched: the pages' scripts put them
into the document as text, never as markup.
"""

from urllib.parse import urlencode

from django.urls import reverse

from provenance import colors, dag, reading
from provenance.layout import layered
from provenance.models import FuseDecision, Node, Project, Trace


def trace_url(project: Project, trace_id: str, product_id: str | None = None) -> str:
    url = reverse("provenance:trace-detail", args=[project.slug, trace_id])
    return f"{url}?{urlencode({'node': product_id})}" if product_id else url


isoformat = reading.isoformat


def list_page(page: list[Trace]) -> list[Trace]:
    """A page of traces with everything a list row shows, in two more queries."""
    return reading.with_final_answers(reading.with_fused_counts(page))


def trace_row(project: Project, trace: Trace) -> dict:
    """A list row as data, for the live list (the server-rendered list shows the same)."""
    final = getattr(trace, "final", None)
    return {
        "trace_id": trace.trace_id,
        "url": trace_url(project, trace.trace_id),
        "node_count": trace.node_count,
        "min_confidence": trace.min_confidence,
        "min_color": colors.confidence_color(trace.min_confidence),
        "fused_count": getattr(trace, "fused_count", 0),
        "error_count": trace.error_count,
        "final_confidence": final.confidence if final else None,
        "final_color": colors.confidence_color(final.confidence if final else None),
        "final_fused": bool(final and final.fuse_state == FuseDecision.BLOCK),
        "verdict": final.verdict if final else None,
        "ended_at": isoformat(trace.ended_at),
    }


def trace_rows(project: Project, trace_pks: list[int]) -> list[dict]:
    page = list(Trace.objects.filter(project=project, pk__in=trace_pks).order_by("-ended_at", "-pk"))
    return [trace_row(project, trace) for trace in list_page(page)]


def graph(project: Project, trace: Trace) -> dict:
    """The trace's nodes and edges in columns, with their layout.

    Parents outside the trace (in another trace, or not arrived yet) are drawn
    too, as `external` nodes: the graph's indices run over the trace's nodes
    first and the external ones after them.
    """
    rows = reading.graph_rows(trace)
    by_product = {row[0]: i for i, row in enumerate(rows)}
    # A child missing from the rows arrived between the two reads: the next refresh draws it.
    pairs = [(child, parent) for child, parent in reading.edge_pairs(trace) if child in by_product]
    # Sorted, so that the same trace always gets the same indices.
    external = sorted({parent for _, parent in pairs if parent not in by_product})
    index = {**by_product, **{pid: len(rows) + k for k, pid in enumerate(external)}}
    edges = [(index[parent], by_product[child]) for child, parent in pairs]

    layout = layered(len(rows) + len(external), edges)
    homes = reading.trace_ids_of(project, external)
    count = len(rows)
    return {
        "trace_id": trace.trace_id,
        "threshold": project.high_uncertainty_threshold,
        "colorscale": colors.plotly_colorscale(),
        "nodes": {
            "id": [row[0] for row in rows],
            "agent": [row[1] for row in rows],
            "step": [row[2] for row in rows],
            "source": [row[3] for row in rows],
            "confidence": [row[4] for row in rows],
            "fused": [int(row[5] == FuseDecision.BLOCK) for row in rows],
            "error": [int(row[6]) for row in rows],
            "x": layout.x[:count],
            "y": layout.y[:count],
        },
        "external": {
            "id": external,
            "trace_id": [homes.get(pid) for pid in external],
            "url": [trace_url(project, homes[pid], pid) if pid in homes else None for pid in external],
            "x": layout.x[count:],
            "y": layout.y[count:],
        },
        "edges": [index for edge in edges for index in edge],
        "layers": layer_labels(rows, layout.x[:count], layout.depth_count),
    }


def layer_labels(rows: list[tuple], depths: list[int], depth_count: int) -> list[str]:
    """Each depth named by its most common source type (else step), for the x axis."""
    tallies: list[dict[str, int]] = [{} for _ in range(depth_count)]
    for row, depth in zip(rows, depths):
        name = row[3] or row[2]
        if name:
            tallies[depth][name] = tallies[depth].get(name, 0) + 1
    return [min(tally, key=lambda name: (-tally[name], name)) if tally else "" for tally in tallies]


def neighbour(project: Project, own_trace_id: str, product_id: str, row: dict | None) -> dict:
    if row is None:
        return {"product_id": product_id, "stored": False}
    return {
        "product_id": product_id,
        "stored": True,
        "agent_id": row["agent_id"],
        "step": row["step"],
        "confidence": row["confidence"],
        "color": colors.confidence_color(row["confidence"]),
        "fused": row["fuse_state"] == FuseDecision.BLOCK,
        "error": row["is_error"],
        "trace_id": row["trace__trace_id"],
        "other_trace": row["trace__trace_id"] != own_trace_id,
        "url": trace_url(project, row["trace__trace_id"], product_id),
    }


def node_detail(project: Project, node: Node) -> dict:
    trace_id = node.trace.trace_id
    final = reading.final_answer(node.trace)
    is_final = final is not None and final.pk == node.pk
    parents, children = reading.node_neighbours(node)
    return {
        "product_id": node.product_id,
        "trace_id": trace_id,
        "agent_id": node.agent_id,
        "step": node.step,
        "source_type": node.source_type,
        "confidence": node.confidence,
        "confidence_raw": node.confidence_raw,
        "confidence_scale": node.confidence_scale,
        "confidence_color": colors.confidence_color(node.confidence),
        "fused": node.fused,
        "fuse_state": FuseDecision(node.fuse_state).label,
        "status": node.status,
        "round": node.round,
        "retry_of": node.retry_of or None,
        "attempt": node.attempt,
        "timestamp": isoformat(node.timestamp),
        "is_final": is_final,
        "content": node.content,
        "raw_input": node.raw_input,
        "content_tier": node.content_tier,
        "content_sha256": node.content_sha256,
        "raw_input_sha256": node.raw_input_sha256,
        "metrics": node.metrics,
        "metadata": node.metadata,
        "fuses": [reading.fuse_summary(fuse) for fuse in reading.fuses_of(node)],
        "escalations": [reading.escalation_summary(e) for e in reading.escalations_of(node)],
        "reviews": [
            {"verdict": review.verdict, "comment": review.comment, "on_trace": not review.product_id,
             "timestamp": isoformat(review.timestamp)}
            for review in reading.reviews_of(node, is_final)
        ],
        "parents": [neighbour(project, trace_id, pid, row) for pid, row in parents],
        "children": [neighbour(project, trace_id, row["product_id"], row) for row in children],
    }


def root_cause(project: Project, node: Node) -> dict:
    """The API's root-cause answer, plus where each cause lives and why it was fused."""
    causes, path = dag.root_causes(project, node.product_id)
    trace_ids = reading.trace_ids_by_pk(project, {cause.trace_pk for cause in causes})
    blocks = reading.block_reasons(project, [c.product_id for c in causes if c.reason == "fused"])
    return {
        "product_id": node.product_id,
        "threshold": project.high_uncertainty_threshold,
        "root_causes": [
            {
                "product_id": cause.product_id,
                "reason": cause.reason,
                "confidence": cause.confidence,
                "color": colors.confidence_color(cause.confidence),
                "trace_id": trace_ids[cause.trace_pk],
                "url": trace_url(project, trace_ids[cause.trace_pk], cause.product_id),
                "fuse_reason": blocks[cause.product_id].reason if cause.product_id in blocks else None,
                "fused_by": blocks[cause.product_id].by_agent_id if cause.product_id in blocks else None,
                "fuse_reason_code": blocks[cause.product_id].reason_code or None if cause.product_id in blocks else None,
            }
            for cause in causes
        ],
        "path": path,
    }


def impact(project: Project, node: Node) -> dict:
    """The API's blast radius, with where each consumer lives."""
    found = dag.descendants(project, node.product_id)
    trace_ids = reading.trace_ids_by_pk(project, {n.trace_pk for n in found})
    return {
        "product_id": node.product_id,
        "descendants": [n.product_id for n in found],
        "nodes": [
            {"product_id": n.product_id, "trace_id": trace_ids[n.trace_pk],
             "url": trace_url(project, trace_ids[n.trace_pk], n.product_id)}
            for n in found
        ],
    }
