"""Calibration asks, of every review in the window, whether the refresh's
target for it still holds: nothing new in its trace, no new node with its
product. While the rollups lag, "new" is every node since the last refresh.
That test must stay one pass over each side: written as NOT IN over the new
nodes, PostgreSQL scanned them once per review when they no longer fit in
memory, and at 5M nodes with a 1M-node lag the chart ran for over ten minutes."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from metrics.counts.judged_reviews import judged_nodes
from metrics.rollups.refresh import refresh_rollups
from tests.support.events import BASE_TIME, node_event, review_event

pytestmark = pytest.mark.django_db


def test_a_lagging_refresh_does_not_make_each_review_scan_the_new_nodes(project, ingest):
    ingest(*[node_event(f"old{i}", f"t{i}", seconds=i, confidence=0.9) for i in range(300)],
           *[review_event(f"t{i}", "correct", product_id=f"old{i}" if i % 2 else "") for i in range(300)])
    refresh_rollups()
    # The lag: new nodes, in the reviewed traces and in others.
    for start in range(0, 3000, 500):
        ingest(*[node_event(f"new{i}", f"t{i % 600}", seconds=400 + i, confidence=0.5) for i in range(start, start + 500)])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE provenance_node, provenance_review, metrics_reviewtarget")
        # The sizes where hashing the new nodes' ids no longer fits, scaled down to these rows.
        cursor.execute("SET LOCAL work_mem = '64kB'")
    with CaptureQueriesContext(connection) as captured:
        judged, unscored = judged_nodes(project, BASE_TIME, BASE_TIME + timedelta(days=1))
    assert (len(judged), unscored) == (300, 0)
    statement = next(q["sql"] for q in captured.captured_queries if "ROW_NUMBER()" in q["sql"])
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + statement)
        plan = "\n".join(row[0] for row in cursor.fetchall())

    per_row = re.findall(r"SubPlan \d+\n\s*->  (?:CTE Scan|Seq Scan|Materialize)[^\n]*", plan)
    assert not per_row, f"a subplan run per review scans a whole set:\n{plan}"
