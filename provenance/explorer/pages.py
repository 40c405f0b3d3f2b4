"""What the trace explorer shows: list rows, the graph with its layout, a node's
details, its root causes and its blast radius, as plain data for the pages,
the API the trace page reads (`/api/v1/traces/{id}/graph`, and `?view=explorer`
on a node, its root cause and its impact) and the live updates.

Every function takes the project the requester may see and only reads through
it. Agent-supplied strings pass through untouched: the pages' scripts put them
into the document as text, never as markup.
"""

from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.urls import reverse

from core.params import whole_number
from core.timestamps import utc_iso
from provenance.dag import reading, walks
from provenance.explorer import colors, folding, reads
from provenance.explorer.layout import BLOCK_PITCH, arranged, block, layered
from provenance.explorer.layout import depths as layout_depths
from provenance.models import Node, Trace
from provenance.vocabulary import ANOMALOUS, FINAL_ANSWER, FUSED, FuseDecision, decision_name, pick_final_answer
from tenancy.models import Project


def trace_url(project: Project, trace_id: str, product_id: str | None = None, analyze: bool = False) -> str:
    """The trace page opened on a node; with `analyze`, its root cause already shown."""
    url = reverse("provenance:trace-detail", args=[project.slug, trace_id])
    return f"{url}?{urlencode({'analyze' if analyze else 'node': product_id})}" if product_id else url


class TraceUrls:
    """trace_url() for many nodes: one `reverse` per trace, not per node."""

    def __init__(self, project: Project):
        self.project = project
        self.pages: dict[str, str] = {}

    def of(self, trace_id: str, product_id: str) -> str:
        if trace_id not in self.pages:
            self.pages[trace_id] = trace_url(self.project, trace_id)
        return f"{self.pages[trace_id]}?{urlencode({'node': product_id})}"


def list_page(page: list[Trace]) -> list[Trace]:
    """A page of traces with everything a list row shows, in two more queries."""
    return reads.with_final_answers(reading.with_fused_counts(page))


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
        "final_id": final.product_id if final else None,
        "final_confidence": final.confidence if final else None,
        "final_color": colors.confidence_color(final.confidence if final else None),
        "final_fused": bool(final and FUSED.holds(final)),
        "verdict": final.verdict if final else None,
        "ended_at": utc_iso(trace.ended_at),
    }


def trace_rows(project: Project, trace_pks: list[int]) -> list[dict]:
    page = list(Trace.objects.filter(project=project, pk__in=trace_pks).order_by("-ended_at", "-pk"))
    return [trace_row(project, trace) for trace in list_page(page)]


@dataclass
class GraphView:
    """What the reader asked the trace's graph to show."""

    expanded: set[str] = field(default_factory=set)
    reveal: set[str] = field(default_factory=set)
    focus: str = ""
    hops: int | None = None
    fold: bool | None = None  # None: fold when the trace is large

    @classmethod
    def from_query(cls, params) -> "GraphView":
        """`?expand=<cluster>&reveal=<node>&focus=<node>&hops=<n|all>&fold=0|1`
        (a QueryDict); ValueError naming the parameter when malformed."""
        hops = params.get("hops", "all")
        if hops == "all":
            hops = None
        else:
            try:
                hops = whole_number(hops, 1, 10_000)
            except ValueError:
                raise ValueError("hops: a whole number from 1 to 10000, or all") from None
        fold = params.get("fold")
        if fold not in (None, "0", "1"):
            raise ValueError("fold: 0 or 1")
        return cls(
            expanded=set(params.getlist("expand")), reveal=set(params.getlist("reveal")),
            focus=params.get("focus", ""), hops=hops,
            fold=None if fold is None else fold == "1",
        )


def graph(project: Project, trace: Trace, view: GraphView | None = None) -> dict:
    """The trace's nodes and edges in columns, with their layout; large traces
    folded into clusters (see `folding`).

    Parents outside the trace (in another trace, or not arrived yet) are drawn
    too, as `external` nodes. Edges are index pairs over the drawn nodes
    first, then the external ones, then the clusters.
    """
    view = view or GraphView()
    rows = reads.graph_rows(trace)
    by_product = {row[0]: i for i, row in enumerate(rows)}
    # A child missing from the rows arrived between the two reads: the next refresh draws it.
    pairs = [(child, parent) for child, parent in reads.edge_pairs(trace) if child in by_product]
    # Sorted, so that the same trace always gets the same indices.
    external = sorted({parent for _, parent in pairs if parent not in by_product})
    index = {**by_product, **{pid: len(rows) + k for k, pid in enumerate(external)}}
    edges = [(index[parent], by_product[child]) for child, parent in pairs]
    count, total = len(rows), len(rows) + len(external)

    shown = list(range(total))
    focus = None
    if view.focus in by_product:
        parents: list[list[int]] = [[] for _ in range(total)]
        children: list[list[int]] = [[] for _ in range(total)]
        for parent, child in edges:
            parents[child].append(parent)
            children[parent].append(child)
        kept = folding.within_hops(by_product[view.focus], view.hops, parents, children)
        shown = sorted(kept)
        focus = {"product_id": view.focus, "hops": view.hops, "count": len(shown)}

    threshold = project.high_uncertainty_threshold
    fold = view.fold if view.fold is not None else len(shown) > folding.FOLD_ABOVE
    if fold:
        drawing = _folded(rows, external, edges, shown, threshold, view, count)
    else:
        drawing = _whole(rows, external, edges, shown)
    # A retry is drawn linked to the attempt it retries (not a parent: a dashed link of its own).
    drawing["retries"] = [(by_product[row[8]], k) for k, row in enumerate(rows) if row[8] and row[8] in by_product]
    homes = reads.trace_ids_of(project, [external[i - count] for i in drawing["external"]])
    return {
        "trace_id": trace.trace_id,
        "threshold": threshold,
        "colorscale": colors.plotly_colorscale(),
        "total": count,
        "folded": fold,
        "focus": focus,
        "summary": trace_summary(trace, rows, pairs),
        **_columns(rows, external, drawing, homes, project),
    }


def _shown_edges(edges: list[tuple[int, int]], shown: list[int]) -> list[tuple[int, int]]:
    """The edges between shown nodes, over their positions in `shown`."""
    if not shown or shown[-1] == len(shown) - 1:
        return edges  # every node is shown (`shown` is sorted): positions are the nodes themselves
    position = {node: k for k, node in enumerate(shown)}
    return [(position[p], position[c]) for p, c in edges if p in position and c in position]


def _whole(rows, external, edges, shown) -> dict:
    """Every shown node on its own, in the classic layered layout."""
    local = _shown_edges(edges, shown)
    layout = layered(len(shown), local)
    count = len(rows)
    inside = [k for k, node in enumerate(shown) if node < count]
    outside = [k for k, node in enumerate(shown) if node >= count]
    return {
        "nodes": [shown[k] for k in inside],
        "node_xy": [(layout.x[k], layout.y[k]) for k in inside],
        "external": [shown[k] for k in outside],
        "external_xy": [(layout.x[k], layout.y[k]) for k in outside],
        "clusters": [],
        "edges": local,
        "order": inside + outside,
        "layers": layer_labels([rows[shown[k]] for k in inside], [layout.x[k] for k in inside], layout.depth_count),
        "columns": layout.depth_count,
    }


def _folded(rows, external, edges, shown, threshold, view: GraphView, count: int) -> dict:
    local = _shown_edges(edges, shown)
    depth = layout_depths(len(shown), local)
    pinned = []
    anomalous = ANOMALOUS.function("fuse_state", "is_error", "confidence", threshold=threshold)
    for node in shown:
        if node >= count:
            pinned.append(True)
            continue
        row = rows[node]
        pinned.append(
            anomalous(row[5], row[6], row[4]) or row[3] == FINAL_ANSWER or row[0] in view.reveal or row[0] == view.focus
        )
    agents = [rows[node][1] if node < count else "" for node in shown]
    rounds = [rows[node][7] if node < count else None for node in shown]
    feeds = [False] * len(shown)
    for p, _ in local:
        feeds[p] = True
    folded = folding.fold(depth, agents, rounds, pinned, feeds, view.expanded)
    clusters = folded.clusters

    # A band is one column of clusters and of the nodes drawn on their own
    # among them, after a column for the pinned nodes that start the band
    # (see `folding.bands_for`).
    starts = [pinned[k] and feeds[k] and depth[k] == folded.bands[folded.band_of[k]][0] for k in range(len(shown))]
    first_singles = [False] * len(folded.bands)
    has_clusters = [False] * len(folded.bands)
    for k in range(len(shown)):
        if starts[k]:
            first_singles[folded.band_of[k]] = True
        else:
            has_clusters[folded.band_of[k]] = True
    width = [1 + (first and other) for first, other in zip(first_singles, has_clusters)]

    singles = [k for k, cluster in enumerate(folded.cluster_of) if cluster < 0]
    single_count = len(singles)
    # A vertex of the folded drawing: a node on its own, else its cluster (after the singles).
    vertex_of = [single_count + cluster for cluster in folded.cluster_of]
    for v, k in enumerate(singles):
        vertex_of[k] = v
    band_of_vertex = [folded.band_of[k] for k in singles] + [cluster.band for cluster in clusters]
    # Each vertex's column within its band; a cluster takes its middle member's.
    within = [int(first_singles[folded.band_of[k]] and not starts[k])
              for k in singles + [cluster.members[len(cluster.members) // 2] for cluster in clusters]]

    def columns_of() -> tuple[list[int], list[int]]:
        x_of_band = [sum(width[:band]) for band in range(len(width))]
        return x_of_band, [x_of_band[band_of_vertex[v]] + within[v] for v in range(len(within))]

    # The heights come from the folded drawing, an opened cluster still one
    # vertex: opening it moves nothing else up or down.
    x_of_band, column = columns_of()
    quotient = set()
    for p, c in local:
        a, b = vertex_of[p], vertex_of[c]
        # Edges inside a cluster, or between clusters of one folded band, are folded away.
        if a != b and (a < single_count or b < single_count or column[a] != column[b]):
            quotient.add((a, b))
    y = arranged(column, sorted(quotient))

    # An opened cluster is a block of its own columns beside its band's (in
    # its column, when it had that column to itself), its members in rows
    # centred on the graph's height: the bands after it move right by the
    # block's width, and nothing else moves.
    opened = [number for number, cluster in enumerate(clusters) if cluster.expanded]
    top, bottom = (max(y), min(y)) if y else (0.0, 0.0)
    blocks = {number: block(len(clusters[number].members), top - bottom) for number in opened}
    occupied = {column[v] for v in range(len(column)) if v < single_count or not clusters[v - single_count].expanded}
    block_column, cursor = {}, {}
    for number in opened:
        v, band = single_count + number, clusters[number].band
        if band not in cursor:
            cursor[band] = within[v] + (column[v] in occupied)
        block_column[number] = cursor[band]
        cursor[band] += blocks[number].columns
    for band, end in cursor.items():
        width[band] = max(width[band], end)
    x_of_band, column = columns_of()

    # The drawn vertices, in the order the page reads them: nodes inside the
    # trace (on their own, then those of opened clusters), nodes outside it,
    # then the clusters still folded.
    xy: dict[int, tuple[float, float]] = {}
    inside = [k for k in singles if shown[k] < count]
    for k in inside:
        xy[k] = (column[vertex_of[k]], y[vertex_of[k]])
    for number in opened:
        members = sorted(clusters[number].members, key=lambda k: (depth[k], k))
        shape = blocks[number]
        left = x_of_band[clusters[number].band] + block_column[number]
        upper = (top + bottom) / 2 + (shape.rows - 1) * BLOCK_PITCH / 2
        for k, (dx, dy) in zip(members, shape.offsets()):
            xy[k] = (left + dx, upper + dy)
        inside.extend(members)
    outside = [k for k in singles if shown[k] >= count]
    folded_away = [number for number, cluster in enumerate(clusters) if not cluster.expanded]
    drawn = {k: position for position, k in enumerate(inside + outside)}
    first_cluster = len(drawn)
    drawn_of = [drawn.get(k, -1) for k in range(len(shown))]
    for position, number in enumerate(folded_away):
        for k in clusters[number].members:
            drawn_of[k] = first_cluster + position
    cluster_xy = [(column[single_count + number], y[single_count + number]) for number in folded_away]

    def x_at(vertex: int) -> float:
        return cluster_xy[vertex - first_cluster][0]

    lines = set()
    for p, c in local:
        a, b = drawn_of[p], drawn_of[c]
        if a != b and (a < first_cluster or b < first_cluster or x_at(a) != x_at(b)):
            lines.add((a, b))
    return {
        "nodes": [shown[k] for k in inside],
        "node_xy": [xy[k] for k in inside],
        "external": [shown[k] for k in outside],
        "external_xy": [(column[vertex_of[k]], y[vertex_of[k]]) for k in outside],
        "clusters": [
            (clusters[number], [shown[k] for k in clusters[number].members], xy_)
            for number, xy_ in zip(folded_away, cluster_xy)
        ],
        "edges": sorted(lines),
        "order": list(range(first_cluster + len(folded_away))),
        "layers": band_labels(rows, shown, folded, count, x_of_band, sum(width)),
        "columns": sum(width),
    }


def _columns(rows, external, drawing, homes, project) -> dict:
    """The drawing as the page reads it: columns of values, edges re-indexed
    over nodes, then external nodes, then clusters."""
    count = len(rows)
    fused = FUSED.function("fuse_state")
    renumber = {vertex: k for k, vertex in enumerate(drawing["order"])}
    nodes = [rows[i] for i in drawing["nodes"]]
    ext = [external[i - count] for i in drawing["external"]]
    clusters = drawing["clusters"]
    # The drawn nodes come first among the vertices, in `drawing["nodes"]` order.
    drawn = {node: k for k, node in enumerate(drawing["nodes"])}
    hidden_ids, hidden_cluster = [], []
    for number, (_, members, _) in enumerate(clusters):
        for node in members:
            hidden_ids.append(rows[node][0])
            hidden_cluster.append(number)
    return {
        "nodes": {
            "id": [row[0] for row in nodes],
            "agent": [row[1] for row in nodes],
            "step": [row[2] for row in nodes],
            "source": [row[3] for row in nodes],
            "confidence": [row[4] for row in nodes],
            "fused": [int(fused(row[5])) for row in nodes],
            "error": [int(row[6]) for row in nodes],
            "x": [xy[0] for xy in drawing["node_xy"]],
            "y": [xy[1] for xy in drawing["node_xy"]],
        },
        "external": {
            "id": ext,
            "trace_id": [homes.get(pid) for pid in ext],
            "url": [trace_url(project, homes[pid], pid) if pid in homes else None for pid in ext],
            "x": [xy[0] for xy in drawing["external_xy"]],
            "y": [xy[1] for xy in drawing["external_xy"]],
        },
        "clusters": {
            "id": [cluster.key for cluster, _, _ in clusters],
            "count": [len(members) for _, members, _ in clusters],
            "agent": [cluster.agent for cluster, _, _ in clusters],
            "round": [cluster.round for cluster, _, _ in clusters],
            "worst": [_worst(rows[m][4] for m in members) for _, members, _ in clusters],
            "first": [rows[members[0]][0] for _, members, _ in clusters],
            "last": [rows[members[-1]][0] for _, members, _ in clusters],
            "x": [xy[0] for _, _, xy in clusters],
            "y": [xy[1] for _, _, xy in clusters],
        },
        "hidden": {"id": hidden_ids, "cluster": hidden_cluster},
        "edges": [renumber[vertex] for edge in drawing["edges"] for vertex in edge],
        # (attempt, retry) index pairs, flat like `edges`, where both are drawn as nodes.
        "retries": [drawn[node] for edge in drawing["retries"] if all(v in drawn for v in edge) for node in edge],
        "layers": drawing["layers"],
        "columns": drawing["columns"],
    }


def _worst(confidences) -> float | None:
    known = [c for c in confidences if c is not None]
    return min(known) if known else None


def trace_summary(trace: Trace, rows: list[tuple], pairs: list[tuple[str, str]]) -> dict:
    """The trace page's header figures, so a live refresh keeps them current:
    from the rows and edges the graph read, by the rules `reading.final_answer`
    and `reading.fused_counts` follow."""
    final = pick_final_answer(rows, {parent for _, parent in pairs}, reads.GRAPH_FIELDS)
    confidence = final[4] if final else None
    return {
        "node_count": trace.node_count,
        "min_confidence": trace.min_confidence,
        "min_color": colors.confidence_color(trace.min_confidence),
        "error_count": trace.error_count,
        "fused_count": reading.fused_count(row[5] for row in rows),
        "final_id": final[0] if final else None,
        "final_confidence": confidence,
        "final_color": colors.confidence_color(confidence),
        "final_fused": bool(final and FUSED.holds(fuse_state=final[5])),
        "ended_at": utc_iso(trace.ended_at),
    }


def column_name(row: tuple) -> str:
    """What a node counts for in its column's header: its step (what its label
    on the graph says), else its source type. Source types are few and
    generic: entity extraction and intent detection both "reasoning", which
    headed unrelated columns alike."""
    return row[2] or row[3] or ""


def layer_labels(rows: list[tuple], depths: list[int], depth_count: int) -> list[str]:
    """Each depth named by its most common `column_name`, for the x axis; a
    name is written where it starts, not repeated on every layer."""
    tallies: list[dict[str, int]] = [{} for _ in range(depth_count)]
    for row, depth in zip(rows, depths):
        name = column_name(row)
        if name:
            tallies[depth][name] = tallies[depth].get(name, 0) + 1
    names = [min(tally, key=lambda name: (-tally[name], name)) if tally else "" for tally in tallies]
    return [name if k == 0 or name != names[k - 1] else "" for k, name in enumerate(names)]


def band_labels(rows, shown, folded, count, x_of_band, columns) -> list[str]:
    """A header per column where the drawing changes what it shows: the most
    common `column_name` of each band, once, not once per layer."""
    labels = [""] * columns
    tallies: list[dict[str, int]] = [{} for _ in folded.bands]
    for k, node in enumerate(shown):
        if node < count:
            name = column_name(rows[node])
            if name:
                tally = tallies[folded.band_of[k]]
                tally[name] = tally.get(name, 0) + 1
    previous = None
    for band, tally in enumerate(tallies):
        name = min(tally, key=lambda n: (-tally[n], n)) if tally else ""
        if name != previous and x_of_band[band] < len(labels):
            labels[x_of_band[band]] = name
        previous = name
    return labels


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
        "fused": FUSED.holds(row),
        "error": row["is_error"],
        "trace_id": row["trace__trace_id"],
        "other_trace": row["trace__trace_id"] != own_trace_id,
        "url": trace_url(project, row["trace__trace_id"], product_id),
    }


def node_detail(project: Project, node: Node) -> dict:
    trace_id = node.trace.trace_id
    final = reading.final_answer(node.trace)
    is_final = final is not None and final.pk == node.pk
    parents, children = reads.node_neighbours(node)
    return {
        "product_id": node.product_id,
        "trace_id": trace_id,
        "agent_id": node.agent_id,
        "step": node.step,
        "source_type": node.source_type,
        "confidence": node.confidence,
        "confidence_raw": node.confidence_raw,
        "confidence_color": colors.confidence_color(node.confidence),
        "fused": node.fused,
        "fuse_decision": decision_name(node.fuse_state),
        "fuse_state": FuseDecision(node.fuse_state).label,
        "status": node.status,
        "round": node.round,
        "retry_of": node.retry_of or None,
        "attempt": node.attempt,
        "timestamp": utc_iso(node.timestamp),
        "duration_ms": node.duration_ms,
        "model": node.model or None,
        "usage": reading.usage_of(node.input_tokens, node.output_tokens),
        "cost_usd": node.cost_usd,
        "is_final": is_final,
        **reading.node_in_full(node),
        "reviews": [
            {"verdict": review.verdict, "comment": review.comment, "on_trace": not review.product_id,
             "timestamp": utc_iso(review.timestamp)}
            for review in reads.reviews_of(node, is_final)
        ],
        "parent_ids": [pid for pid, _ in parents],
        "parents": [neighbour(project, trace_id, pid, row) for pid, row in parents],
        "children": [neighbour(project, trace_id, row["product_id"], row) for row in children],
    }


def root_cause(project: Project, node: Node) -> dict:
    """The root-cause answer of the API and the page: the contract's fields,
    plus where each cause lives and why it was fused, and the path as its
    anomalous steps with the distance folded between them."""
    causes, path, anomalies = walks.root_causes(project, node.product_id)
    trace_ids = reads.trace_ids_by_pk(project, {cause.trace_pk for cause in causes})
    blocks = reads.block_reasons(project, [c.product_id for c in causes if c.reason == "fused"])
    urls = TraceUrls(project)
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
                "url": urls.of(trace_ids[cause.trace_pk], cause.product_id),
                "fuse_reason": blocks[cause.product_id].reason if cause.product_id in blocks else None,
                "fused_by": blocks[cause.product_id].by_agent_id if cause.product_id in blocks else None,
                "fuse_reason_code": blocks[cause.product_id].reason_code or None if cause.product_id in blocks else None,
            }
            for cause in causes
        ],
        "path": path,
        "path_steps": path_steps(path, anomalies),
    }


def path_steps(path: list[str], anomalies: dict[str, str]) -> list[dict]:
    """The path with its ends and anomalous nodes kept and every run of more
    than three ordinary nodes between them folded into `{"skipped": n}`: a
    5,000-step path reads as `frag-c → … 4,990 nodes … → n4999`."""
    steps: list[dict] = []
    run: list[str] = []

    def flush():
        if len(run) > 3:
            steps.append({"skipped": len(run)})
        else:
            steps.extend({"product_id": pid, "reason": None} for pid in run)
        run.clear()

    for k, pid in enumerate(path):
        if pid in anomalies or k == 0 or k == len(path) - 1:
            flush()
            steps.append({"product_id": pid, "reason": anomalies.get(pid)})
        else:
            run.append(pid)
    flush()
    return steps


def impact(project: Project, node: Node) -> dict:
    """The blast radius of the API and the page, with where each consumer lives."""
    found = walks.descendants(project, node.product_id)
    trace_ids = reads.trace_ids_by_pk(project, {n.trace_pk for n in found})
    urls = TraceUrls(project)
    # A consumer in the node's own trace is selected on the page, not opened:
    # only those elsewhere need a link (thousands of urlencode calls otherwise).
    return {
        "product_id": node.product_id,
        "descendants": [n.product_id for n in found],
        "nodes": [
            {"product_id": n.product_id, "trace_id": trace_ids[n.trace_pk],
             "url": None if n.trace_pk == node.trace_id else urls.of(trace_ids[n.trace_pk], n.product_id)}
            for n in found
        ],
    }
