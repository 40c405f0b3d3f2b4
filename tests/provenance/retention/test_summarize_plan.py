"""The summarizing pass asks, of every old node, whether it was reviewed or
escalated. Those sets must be built once per batch, not looked up per node:
with mostly trace-level reviews (product id ''), a correlated lookup was
planned as a scan of every review per node, and a 10M-node project's
retention would have run for hours."""

import re
from datetime import timedelta

import pytest
from django.db import connection

from provenance.retention.summarize import Summarizing
from tests.support.events import BASE_TIME, node_event, review_event

pytestmark = pytest.mark.django_db


def test_reviewed_and_escalated_ids_are_hashed_once_per_batch_not_probed_per_node(project, ingest):
    for start in range(0, 600, 200):
        ingest(*[node_event(f"n{i}", f"t{i}", confidence=0.95) for i in range(start, start + 200)])
        ingest(*[review_event(f"t{i}", "correct") for i in range(start, start + 200)])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE provenance_review, provenance_escalation, provenance_node, provenance_edge")
    batch = Summarizing.of(project, BASE_TIME + timedelta(days=1), 0.8).candidates(0, 5000)
    sql, params = batch.values("pk").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())

    subplans = re.findall(r"SubPlan (\d+)\n\s*->  [^\n]*on (provenance_review|provenance_escalation) ", plan)
    assert {table for _, table in subplans} == {"provenance_review", "provenance_escalation"}, plan
    for number, table in subplans:
        assert f"hashed SubPlan {number})" in plan, f"{table} looked up per node:\n{plan}"
