"""A trace's final answer, one rule in three forms (provenance.vocabulary):
the SQL, the ORM expression and the Python pick agree on every case."""

from django.db import connection

from metrics.rollups.schema import review_target_sql
from provenance.dag import reading
from provenance.explorer import pages
from provenance.models import Edge, Node, Trace
from provenance.vocabulary import final_answer_sql, pick_final_answer
from tests.support.events import fuse_event, node_event

CASES = {
    # trace: its final answer
    "t-named": "named-final",       # a final_answer node, though a later node consumed it
    "t-leaf": "leaf-b",             # no final_answer node: the newest node nothing consumed
    "t-fused-leaf": None,           # ... unless it is fused: the run ended in a fuse
    "t-fused-final": "ff-final",    # a fused final_answer node is still the answer
    "t-cross": "cross-a",           # a consumer in another trace does not count
}


def ingest_cases(ingest):
    ingest(
        node_event("named-a", "t-named"),
        node_event("named-final", "t-named", parents=["named-a"], seconds=1, source_type="final_answer"),
        node_event("named-note", "t-named", parents=["named-final"], seconds=2),
        node_event("leaf-a", "t-leaf"),
        node_event("leaf-b", "t-leaf", parents=["leaf-a"], seconds=1),
        node_event("leaf-old", "t-leaf", seconds=-5),
        node_event("fl-a", "t-fused-leaf"),
        node_event("fl-b", "t-fused-leaf", parents=["fl-a"], seconds=1),
        fuse_event("fl-b", trace_id="t-fused-leaf"),
        node_event("ff-final", "t-fused-final", source_type="final_answer"),
        fuse_event("ff-final", trace_id="t-fused-final"),
        node_event("cross-a", "t-cross"),
        node_event("cross-b", "t-cross-consumer", parents=["cross-a"], seconds=1),
    )


def test_the_sql_orm_and_python_forms_agree(project, ingest):
    ingest_cases(ingest)
    for trace_id, expected in CASES.items():
        trace = Trace.objects.get(project=project, trace_id=trace_id)
        orm = reading.final_answer(trace)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {final_answer_sql(str(trace.pk), str(trace.project_id))}")
            sql_pk = cursor.fetchone()[0]
        nodes = Node.objects.filter(trace=trace)
        consumed = set(Edge.objects.filter(trace=trace).values_list("parent_product_id", flat=True))
        python = pick_final_answer(nodes, consumed)
        found = {getattr(orm, "product_id", None), Node.objects.filter(pk=sql_pk).values_list("product_id", flat=True)
                 .first(), getattr(python, "product_id", None)}
        assert found == {expected}, trace_id


def test_the_trace_pages_header_and_a_trace_reviews_target_follow_the_rule(project, ingest):
    """The header the trace page refreshes live (picked from the rows the
    graph read) and the node a trace-level review judges (the metrics' SQL)."""
    ingest_cases(ingest)
    for trace_id, expected in CASES.items():
        trace = Trace.objects.get(project=project, trace_id=trace_id)
        header = pages.graph(project, trace)["summary"]
        assert header["final_id"] == expected, trace_id
        assert header["fused_count"] == reading.fused_counts([trace]).get(trace.pk, 0), trace_id
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT ({review_target_sql('r')}) FROM (SELECT %s AS trace_id, '' AS product_id, "
                           f"%s AS project_id) r", [trace.pk, project.pk])
            target = cursor.fetchone()[0]
        assert Node.objects.filter(pk=target).values_list("product_id", flat=True).first() == expected, trace_id
