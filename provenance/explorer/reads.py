"""The trace explorer's reads: each batches a page (or a trace) into a fixed
number of queries, whatever the number of rows."""

from django.db.models import Case, Exists, F, OuterRef, Q, QuerySet, Subquery, When

from core.replica import reading_connection
from provenance import vocabulary
from provenance.models import Edge, Fuse, Node, Review, ReviewVerdict, Trace
from provenance.vocabulary import BLOCKING_DECISION, HIGH_UNCERTAINTY, UNCERTAIN_TRACE
from tenancy.colocation import in_outer_project, same_project
from tenancy.membership import projects_for
from tenancy.models import Project


def final_answer_nodes(project_id: int, trace_qs: QuerySet) -> QuerySet:
    """The final answers of the given traces (of one project), each annotated
    with `verdict`: the newest review of its trace as a whole or of that node."""
    reviews = Review.objects.filter(project=OuterRef("project"), trace=OuterRef("trace")).filter(
        Q(product_id="") | Q(product_id=OuterRef("product_id"))
    )
    finals = trace_qs.filter(project_id=project_id).annotate(final_pk=vocabulary.final_answer_pk()).values("final_pk")
    return Node.objects.filter(project_id=project_id, pk__in=finals).annotate(
        verdict=Subquery(reviews.order_by("-timestamp", "-pk").values("verdict")[:1])
    )


def with_final_answers(page: list[Trace]) -> list[Trace]:
    """Adds `final` (the final answer node with its `verdict`, or None) to a page
    of traces with one query."""
    project_id = page[0].project_id if page else None
    finals = final_answer_nodes(project_id, Trace.objects.filter(pk__in=[t.pk for t in page])).only(
        "pk", "trace_id", "product_id", "confidence", "fuse_state", "is_error"
    )
    by_trace = {node.trace_id: node for node in finals}
    for trace in page:
        trace.final = by_trace.get(trace.pk)
    return page


def bad_answers(project: Project) -> QuerySet:
    """Final answers reviewed `incorrect` or themselves below the project's
    high-uncertainty threshold, worst first: confirmed wrong before merely
    doubtful, then the least confident, then the newest."""
    threshold = project.high_uncertainty_threshold
    incorrect = Review.objects.filter(in_outer_project(trace=OuterRef("pk"), verdict=ReviewVerdict.INCORRECT))
    # A low-confidence final answer makes its trace's minimum low too: a cheap pre-filter.
    candidates = Trace.objects.filter(project=project).filter(UNCERTAIN_TRACE.q(threshold=threshold) | Exists(incorrect))
    return (
        final_answer_nodes(project.pk, candidates)
        .filter(Q(verdict=ReviewVerdict.INCORRECT) | HIGH_UNCERTAINTY.q(threshold=threshold))
        .filter(same_project("trace"))
        .select_related("trace")
        .order_by(
            Case(When(verdict=ReviewVerdict.INCORRECT, then=0), default=1),
            F("confidence").asc(nulls_last=True),
            F("trace__ended_at").desc(nulls_last=True),
            "-pk",
        )
    )


GRAPH_FIELDS = ("product_id", "agent_id", "step", "source_type", "confidence", "fuse_state", "is_error", "round",
                "retry_of")


def graph_rows(trace: Trace) -> list[tuple]:
    """The nodes of a trace as GRAPH_FIELDS tuples, oldest first.

    One plain statement fetched whole: the ORM's values_list fetches in chunks
    of 100 rows, 500 round trips through the driver for a 50,000-node trace.
    No column needs a converter (SQLite's is_error comes back 0/1, which every
    reader treats as a truth value)."""
    with reading_connection().cursor() as cursor:
        cursor.execute(
            f"SELECT {', '.join(map(reading_connection().ops.quote_name, GRAPH_FIELDS))} FROM {Node._meta.db_table} WHERE project_id = %s AND trace_id = %s ORDER BY timestamp, id",
            [trace.project_id, trace.pk],
        )
        return cursor.fetchall()


def trace_ids_of(project: Project, product_ids: list[str]) -> dict[str, str]:
    """Which trace each of these product ids lives in; ids not stored are left out."""
    if not product_ids:
        return {}
    return dict(
        Node.objects.filter(project=project, product_id__in=product_ids).values_list("product_id", "trace__trace_id")
    )


NEIGHBOUR_FIELDS = ("product_id", "agent_id", "step", "confidence", "fuse_state", "is_error", "trace__trace_id")


def node_neighbours(node: Node) -> tuple[list[tuple[str, dict | None]], list[dict]]:
    """A node's parents in its own order (None for a parent not stored yet) and
    its children in any trace, oldest first; each as a NEIGHBOUR_FIELDS dict."""
    parent_ids = list(
        Edge.objects.filter(project=node.project_id, child_product_id=node.product_id)
        .order_by("position")
        .values_list("parent_product_id", flat=True)
    )
    stored = {
        row["product_id"]: row
        for row in Node.objects.filter(project=node.project_id, product_id__in=parent_ids).values(*NEIGHBOUR_FIELDS)
    }
    consumers = Edge.objects.filter(project=node.project_id, parent_product_id=node.product_id)
    children = list(
        Node.objects.filter(project=node.project_id, product_id__in=consumers.values("child_product_id"))
        .order_by("timestamp", "pk")
        .values(*NEIGHBOUR_FIELDS)
    )
    return [(pid, stored.get(pid)) for pid in parent_ids], children


def reviews_of(node: Node, is_final: bool) -> QuerySet:
    """Reviews of this node; for a trace's final answer also those of the trace as a whole."""
    on_node = (Q(product_id=node.product_id) | Q(product_id="")) if is_final else Q(product_id=node.product_id)
    return Review.objects.filter(project=node.project_id, trace=node.trace_id).filter(on_node).order_by("-timestamp", "-pk")


def trace_ids_by_pk(project: Project, trace_pks: set[int]) -> dict[int, str]:
    return dict(Trace.objects.filter(project=project, pk__in=trace_pks).values_list("pk", "trace_id"))


def block_reasons(project: Project, product_ids: list[str]) -> dict[str, Fuse]:
    """The newest `block` decision on each of these nodes, for saying why it was fused."""
    found: dict[str, Fuse] = {}
    blocks = Fuse.objects.filter(BLOCKING_DECISION.q(), project=project, product_id__in=product_ids)
    for fuse in blocks.order_by("timestamp", "pk"):
        found[fuse.product_id] = fuse
    return found


def recent_agents_and_steps(project: Project, sample: int = 5000) -> tuple[list[str], list[str]]:
    """Agent ids and steps seen in the project's newest nodes, to suggest in filters."""
    recent = Node.objects.filter(project=project).order_by("-timestamp").values_list("agent_id", "step")[:sample]
    agents, steps = set(), set()
    for agent_id, step in recent:
        agents.add(agent_id)
        if step:
            steps.add(step)
    return sorted(agents), sorted(steps)


def edge_pairs(trace: Trace) -> list[tuple[str, str]]:
    """(child, parent) product ids of a trace's edges, in no particular order:
    cheaper than parents_by_child() when the order does not matter."""
    with reading_connection().cursor() as cursor:
        cursor.execute(f"SELECT child_product_id, parent_product_id FROM {Edge._meta.db_table} "
                       "WHERE project_id = %s AND trace_id = %s", [trace.project_id, trace.pk])
        return cursor.fetchall()


def visible_trace(user, slug: str, trace_id: str) -> Trace | None:
    """The trace, with its project, if the user may see that project; else None."""
    project = projects_for(user).filter(slug=slug).first()
    if project is None:
        return None
    return Trace.objects.filter(project=project, trace_id=trace_id).select_related("project").first()
