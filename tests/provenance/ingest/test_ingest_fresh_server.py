"""The first batches a freshly started server stores: each of its database
connections writes its first COPY as well as its later ones (a dumper registered
too late once stored every jsonb value of those batches as a JSON string)."""

import httpx
import pytest
from django.db import connection

from tests.support.events import node_event
from tests.support.serving import Serve, database_url

pytestmark = pytest.mark.django_db(transaction=True)


def test_metrics_and_metadata_of_a_new_servers_first_batches_read_back_as_objects(tmp_path, make_project):
    if connection.vendor != "postgresql":
        pytest.skip("COPY is PostgreSQL's")
    _, key = make_project("fresh")
    with Serve(tmp_path, DATABASE_URL=database_url(connection.settings_dict)) as server:
        for batch in range(3):
            server.ingest(key, *[node_event(f"b{batch}-n{i}", "fresh-trace", seconds=i, metrics={"entropy": 0.5 + i},
                                            metadata={"model": "m1"}) for i in range(5)])
        auth = {"Authorization": f"Bearer {key}"}
        details = [httpx.get(f"{server.url}/api/v1/traces/fresh-trace/nodes/b{batch}-n{i}", headers=auth).json()
                   for batch in range(3) for i in (0, 4)]
    assert [d["metrics"] for d in details] == [{"entropy": 0.5}, {"entropy": 4.5}] * 3
    assert all(d["metadata"] == {"model": "m1"} for d in details)
