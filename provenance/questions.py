"""What a trace's workflow was asked: its earliest user-input node's content,
else its earliest node's raw input (or content). The question names a trace to
a person (the escalation inbox) and becomes a truth-set item's input."""

from django.db.models import OuterRef, Subquery, TextField, Value
from django.db.models.functions import Coalesce, NullIf

from provenance.models import Node, Trace
from tenancy.colocation import in_outer_project

USER_INPUT = "user_input"


def _earliest(trace_ref, field: str, **filters) -> Subquery:
    nodes = Node.objects.filter(in_outer_project(trace=trace_ref, **filters)).order_by("timestamp", "pk")
    return Subquery(nodes.values(field)[:1])


def questions(project_id: int, trace_pks) -> dict[int, str]:
    """{trace pk: question} of one project's traces in one statement; a trace
    without one maps to ""."""
    ref = OuterRef("pk")
    # An empty text counts as absent, as in `question`.
    empty = Value("", output_field=TextField())
    asked = Coalesce(NullIf(_earliest(ref, "content", source_type=USER_INPUT), empty),
                     NullIf(_earliest(ref, "raw_input", source_type=USER_INPUT), empty),
                     NullIf(_earliest(ref, "raw_input"), empty), _earliest(ref, "content"))
    rows = Trace.objects.filter(project_id=project_id, pk__in=set(trace_pks)).annotate(asked=asked).values_list("pk", "asked")
    return {pk: text or "" for pk, text in rows}


def question(trace: Trace) -> str:
    return questions(trace.project_id, [trace.pk]).get(trace.pk, "")
