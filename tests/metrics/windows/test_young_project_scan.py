"""A young project is read from its raw rows until its first rollup refresh
commits, while its rows have no statistics yet (autovacuum has not analyzed
them). The raw scan narrows nodes to an environment without a join to the
traces (production: not in the short list of the others' traces; another
environment: each node's trace looked up by key): a planner expecting one node
chose a nested loop over every trace of the environment per node: the
scale-out bench's first Overviews timed out, and an Overview of 240,000
unanalyzed nodes took 510 s (0.86 s without the join)."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from metrics.questions import Filters, Question
from metrics.windows import scan
from provenance.models import Node
from tests.support.events import BASE_TIME, fuse_event, node_event

pytestmark = pytest.mark.django_db(transaction=True)


def plans_of_the_scan(project, question) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        found = scan.grouped(project, question)
    assert found, "the window holds the nodes"
    plans = []
    with connection.cursor() as cursor:
        for query in captured.captured_queries:
            if "provenance_node" in query["sql"]:
                cursor.execute("EXPLAIN " + query["sql"])
                plans.append("\n".join(row[0] for row in cursor.fetchall()))
    return plans


@pytest.mark.parametrize("environment", ["production", "evaluation"])
def test_the_raw_scan_of_unanalyzed_rows_never_joins_nodes_to_traces(project, ingest, environment):
    if connection.vendor != "postgresql":
        pytest.skip("plans are PostgreSQL's")
    with connection.cursor() as cursor:
        # Statistics gathered before the project's rows came: the planner expects none of them.
        cursor.execute("ANALYZE provenance_node, provenance_trace")
    events = [node_event(f"n{i}", f"t{i // 5}", parents=[f"n{i - 1}"] if i % 5 else [], seconds=i,
                         agent_id=f"agent-{i % 3}", confidence=(i % 10) / 10, environment=environment)
              for i in range(200)]
    ingest(*events, *(fuse_event(f"n{i}", trace_id=f"t{i // 5}") for i in range(0, 200, 7)))
    question = Question(BASE_TIME, BASE_TIME + timedelta(hours=1), Filters(environment=environment), "minute",
                        "agent_id", metrics=("trace_count", "fuse_rate", "consecutive_fuses"))
    plans = plans_of_the_scan(project, question)
    assert plans and Node.objects.count() == 200
    for plan in plans:
        assert "provenance_trace" not in plan or "SubPlan" in plan, plan
        assert "Join Filter" not in plan and "Nested Loop" not in plan, plan
