"""Ingest is a bulk path: a batch costs a fixed handful of SQL statements,
whatever its size."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from tests.provenance.stored import statuses, stored_rows
from tests.support.events import fuse_event, node_event, review_event

# The statement budget of one batch, whatever its size: key lookup, last-used
# stamp, two savepoints, the taken-ids lookup, traces, node ids, nodes, event
# ids, edges, fuses, fuse states, reviews, escalations closed, the root causes
# marked pending, two releases. 17: no spare left.
MAX_STATEMENTS = 17


def mixed_batch(size: int, prefix: str = "") -> list[dict]:
    """Every kind of event in every batch, so statement counts compare like for like."""
    events = []
    for i in range(size):
        trace = f"{prefix}t{i // 20}"
        if i % 20 == 19:
            events.append(review_event(trace, "incorrect", event_id=f"{prefix}rv{i}"))
        elif i % 10 == 9:
            events.append(fuse_event(f"{prefix}p{i - 1}", trace_id=trace, event_id=f"{prefix}fu{i}"))
        else:
            parents = [f"{prefix}p{j}" for j in (i - 1, i - 3) if j >= 0 and j // 20 == i // 20 and j % 10 != 9]
            extra = {"fuse": {"decision": "downweight", "reason": "r"}} if i % 7 == 0 else {}
            events.append(node_event(f"{prefix}p{i}", trace, parents=parents, seconds=i, event_id=f"{prefix}ev{i}",
                                     confidence=(i % 10) / 10, content="c" * 300, metadata={"i": i}, **extra))
    return events


def client_for(make_project):
    project, key = make_project()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return project, client


def statements_for(client, events: list) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.post("/api/v1/ingest", {"batch": events}, format="json")
    assert response.status_code == 207
    assert response.json()["errors"] == []
    return len(captured)


def test_a_1000_event_batch_costs_a_handful_of_statements(make_project, django_assert_max_num_queries):
    project, client = client_for(make_project)
    events = mixed_batch(1000)

    with django_assert_max_num_queries(MAX_STATEMENTS):
        response = client.post("/api/v1/ingest", {"batch": events}, format="json")

    assert set(statuses(response.json()).values()) == {201}
    assert stored_rows(project)["nodes"] == 900


@pytest.mark.parametrize(("smaller", "larger"), [(20, 1000), (200, 600)])
def test_statement_count_does_not_grow_with_batch_size(make_project, smaller, larger):
    _, small_client = client_for(make_project)
    _, large_client = client_for(make_project)

    assert statements_for(small_client, mixed_batch(smaller)) == statements_for(large_client, mixed_batch(larger))


def test_a_small_batch_costs_the_same_handful(make_project, django_assert_max_num_queries):
    _, client = client_for(make_project)

    with django_assert_max_num_queries(MAX_STATEMENTS):
        client.post("/api/v1/ingest", {"batch": mixed_batch(20)}, format="json")


def test_a_resent_batch_costs_no_more_than_the_first(make_project):
    _, client = client_for(make_project)
    events = mixed_batch(200)
    first = statements_for(client, events)

    assert statements_for(client, events) <= first


def test_the_key_last_used_stamp_is_written_once_not_per_batch(make_project):
    _, client = client_for(make_project)
    with CaptureQueriesContext(connection) as first:
        client.post("/api/v1/ingest", {"batch": mixed_batch(20, "a-")}, format="json")
    with CaptureQueriesContext(connection) as second:
        client.post("/api/v1/ingest", {"batch": mixed_batch(20, "b-")}, format="json")

    def stamps(captured):
        return [q["sql"] for q in captured.captured_queries if q["sql"].startswith('UPDATE "provenance_apikey"')]

    assert len(stamps(first)) == 1
    assert stamps(second) == []


# The common batch, new nodes only (what agents send most and the bench
# measures): key lookup, two savepoints, event ids, traces, nodes, edges, fuse
# states (a consumer's decision may have come first), the root causes marked
# pending (their refresh is the reader's, not this request's), two releases.
NEW_NODES_STATEMENTS = 11


def test_a_batch_of_new_nodes_costs_a_pinned_count_of_statements(make_project):
    _, client = client_for(make_project)
    client.post("/api/v1/ingest", {"batch": mixed_batch(20, "warm-")}, format="json")  # the key's last-used stamp
    nodes = [node_event(f"n{i}", f"t{i // 20}", parents=[f"n{i - 1}"] if i % 20 else [], seconds=i,
                        metadata={"i": i}) for i in range(1000)]

    with CaptureQueriesContext(connection) as captured:
        response = client.post("/api/v1/ingest", {"batch": nodes}, format="json")

    assert set(statuses(response.json()).values()) == {201}
    assert len(captured) == NEW_NODES_STATEMENTS, "\n".join(q["sql"][:80] for q in captured.captured_queries)
