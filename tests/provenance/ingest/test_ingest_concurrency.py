"""Two clients sending overlapping batches at the same moment: every event is
stored once, every product id belongs to one event, and nobody gets a 500."""

import threading

import pytest
from django.db import connections
from rest_framework.test import APIClient

from tenancy.models import Project
from tests.provenance.stored import statuses, stored_rows
from tests.support.events import node_event

pytestmark = pytest.mark.django_db(transaction=True)


def post_together(key: str, batches: list[list[dict]]) -> list:
    """Posts each batch from its own thread (its own database connection), all
    released at once."""
    start = threading.Barrier(len(batches))
    responses: list = [None] * len(batches)

    def send(index: int, batch: list[dict]):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        try:
            start.wait()
            responses[index] = client.post("/api/v1/ingest", {"batch": batch}, format="json")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=send, args=(i, batch)) for i, batch in enumerate(batches)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return responses


def make_project_with_key(slug: str) -> tuple[Project, str]:
    project = Project.objects.create(slug=slug)
    return project, project.issue_api_key()[1]


def chain(trace: str, count: int) -> list[dict]:
    return [node_event(f"{trace}-{i}", trace, parents=[f"{trace}-{i - 1}"] if i else [], seconds=i)
            for i in range(count)]


def test_the_same_batch_sent_twice_at_once_is_stored_once():
    project, key = make_project_with_key("race-same")
    batch = chain("t1", 300)

    responses = post_together(key, [batch, batch])

    assert [r.status_code for r in responses] == [207, 207]
    for event in batch:
        assert sorted(statuses(r.json())[event["id"]] for r in responses) == [200, 201]
    assert stored_rows(project) | {"traces": 1} == {"traces": 1, "nodes": 300, "edges": 299, "fuses": 0,
                                                     "reviews": 0, "event_ids": 300}
    assert Project.objects.get(pk=project.pk).traces.get().node_count == 300


def test_one_product_id_claimed_by_two_events_at_once_goes_to_one():
    project, key = make_project_with_key("race-product")
    first = [node_event(f"p{i}", event_id=f"a{i}", content="a") for i in range(250)]
    second = [node_event(f"p{i}", event_id=f"b{i}", content="b") for i in range(250)]

    responses = post_together(key, [first, second])

    results = [statuses(r.json()) for r in responses]
    for i in range(250):
        assert sorted([results[0][f"a{i}"], results[1][f"b{i}"]]) == [201, 409]
    assert stored_rows(project)["nodes"] == 250
    assert stored_rows(project)["event_ids"] == 250
    assert Project.objects.get(pk=project.pk).traces.get().node_count == 250
