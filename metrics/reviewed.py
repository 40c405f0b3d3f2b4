"""Which confidence a review judges.

A review naming a product_id judges that node. A trace-level review judges
the trace's final answer, by the rule of provenance.reading.final_answer: the
newest node with source_type "final_answer", else the newest node that
nothing in the trace consumed. When a node was reviewed more than once, the
newest review counts. Reviews whose node is missing or has no confidence are
counted apart ("unscored"). Filters apply to the judged node; the window to
the review's timestamp.
"""

import json
from datetime import datetime

from django.db import connection

from django.db.models import Case, OuterRef, Subquery, When
from django.db.models.functions import Coalesce

from metrics.calibration import Judged
from metrics.figures import DIMENSIONS, Filters
from provenance.models import Edge, Node, Review, Verdict


def judged_nodes(project, start: datetime, end: datetime, filters: Filters = Filters()) -> tuple[list[Judged], int]:
    """(the judged nodes with a confidence, how many reviews could not be scored)."""
    by_product = Node.objects.filter(project=project, product_id=OuterRef("product_id")).values("pk")[:1]
    newest = ("-timestamp", "-pk")
    final = Node.objects.filter(trace=OuterRef("trace"), source_type="final_answer").order_by(*newest).values("pk")[:1]
    consumed = Edge.objects.filter(trace=OuterRef(OuterRef("trace"))).values("parent_product_id")
    unconsumed = Node.objects.filter(trace=OuterRef("trace")).exclude(product_id__in=consumed).order_by(*newest)
    reviews = (
        Review.objects.filter(project=project, timestamp__gte=start, timestamp__lt=end)
        .annotate(target=Case(
            When(product_id="", then=Coalesce(Subquery(final), Subquery(unconsumed.values("pk")[:1]))),
            default=Subquery(by_product),
        ))
        .values("pk", "timestamp", "verdict", "target")
    )
    sql, params = reviews.query.sql_with_params()
    node = Node._meta.db_table
    with connection.cursor() as cursor:
        # One statement: map each review, keep the newest per judged node, join the node.
        cursor.execute(
            f"""
            SELECT r.target, r.verdict, n.confidence, n.metrics, n.agent_id, n.step, n.source_type, n.round
            FROM (SELECT target, verdict,
                         ROW_NUMBER() OVER (PARTITION BY target ORDER BY timestamp DESC, pk DESC) AS newest
                  FROM ({sql}) AS reviews) AS r
            LEFT JOIN {node} n ON n.id = r.target
            WHERE r.newest = 1 OR r.target IS NULL
            """,
            params,
        )
        rows = cursor.fetchall()
    wanted = list(filters.dimensions.items())
    judged, unscored = [], 0
    for target, verdict, confidence, metrics, *dimensions in rows:
        if target is None:
            unscored += 1
            continue
        named = dict(zip(DIMENSIONS, dimensions))
        if any(named[column] != value for column, value in wanted):
            continue
        if confidence is None:
            unscored += 1
            continue
        if isinstance(metrics, str):
            metrics = json.loads(metrics)
        judged.append(Judged(confidence, verdict == Verdict.CORRECT, metrics if isinstance(metrics, dict) else {}))
    return judged, unscored
