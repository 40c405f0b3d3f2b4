"""Which nodes keep their full `content` and `raw_input` once they are older
than the project's `full_content_days`.

A node keeps its full text when it matters to a person reading why something
went wrong: its confidence is below `keep_full_below`, it was fused (blocked),
it failed (`status: error`), it was escalated, or it was reviewed (any verdict:
a review naming it, or a trace-level review of the trace it is the final
answer of). The direct parents of such a node keep theirs too, so the inputs of
every kept node stay readable. A node without a confidence is not "below" the
threshold. Everything else keeps a summary (`SUMMARY_CHARS` characters and a
SHA-256 of each full text).
"""

from django.db.models import Exists, OuterRef, Q

from provenance.explorer.reads import final_answer_nodes
from provenance.models import Edge, Escalation, Node, Review, Trace
from provenance.vocabulary import ERRORED, FUSED
from tenancy.models import Project

SUMMARY_CHARS = 280


def reviewed_final_answers(project: Project) -> list[int]:
    """Pks of the final answers of traces with a trace-level review (by the
    rule the rest of the product uses to pick a trace's final answer)."""
    reviewed = Trace.objects.filter(project=project, pk__in=Review.objects.filter(
        project=project, product_id="").values("trace_id"))
    return list(final_answer_nodes(project.pk, reviewed).values_list("pk", flat=True))


def reviewed_answers_and_their_parents(project: Project) -> list[int]:
    """Sorted pks of the reviewed final answers and of their direct parents:
    the nodes that keep their full text because of a trace-level review.
    Worked out once per pass; each batch then names only the few in its id
    range, instead of sending (and planning) all of them every time."""
    answers = reviewed_final_answers(project)
    parents = Node.objects.filter(project=project, product_id__in=Edge.objects.filter(
        project=project, child_product_id__in=Node.objects.filter(pk__in=answers).values("product_id"),
    ).values("parent_product_id")).values_list("pk", flat=True)
    return sorted({*answers, *parents})


def matters_by_itself(project_pk: int, keep_full_below: float) -> Q:
    """The node itself matters, by every rule but two: "parent of one that
    matters", and "a reviewed final answer" (both are in keeps_full_text).
    Written over the node's own columns only, so it can stand inside a
    subquery over children too. The reviewed and escalated product ids are
    uncorrelated sets, which PostgreSQL hashes once per statement: as
    correlated EXISTS probes they were planned as a scan of every review per
    node, because trace-level reviews (product id '') make any one product id
    look like most of the table (a 10M-node project's retention would have
    taken hours)."""
    reviewed = Review.objects.filter(project_id=project_pk).exclude(product_id="").values("product_id")
    escalated = Escalation.objects.filter(project_id=project_pk).exclude(product_id="").values("product_id")
    return (
        Q(confidence__lt=keep_full_below)
        | FUSED.q()
        | ERRORED.q()
        | Q(product_id__in=escalated)
        | Q(product_id__in=reviewed)
    )


def keeps_full_text(project_pk: int, keep_full_below: float, kept_for_reviews: list[int]) -> Q:
    """`kept_for_reviews`: reviewed_answers_and_their_parents, or the part of it a batch covers."""
    matters = matters_by_itself(project_pk, keep_full_below)
    mattering_child = Node.objects.filter(
        project=OuterRef("project"), product_id=OuterRef("child_product_id")
    ).filter(matters)
    parent_of_mattering = Edge.objects.filter(
        project=OuterRef("project"), parent_product_id=OuterRef("product_id")
    ).filter(Exists(mattering_child))
    return matters | Q(pk__in=kept_for_reviews) | Exists(parent_of_mattering)
