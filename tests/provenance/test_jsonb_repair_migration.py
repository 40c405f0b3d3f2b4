"""Migration 0008 parses back the node metrics and metadata that the first COPY
of a connection stored as JSON strings, and leaves every other row as it was."""

import pytest
from django.db import connection

from provenance.models import Node
from tests.support.events import node_event
from tests.support.migrating import migrate, migrate_to_newest

pytestmark = pytest.mark.django_db(transaction=True)


def test_string_metrics_and_metadata_become_their_objects_again(ingest):
    if connection.vendor != "postgresql":
        pytest.skip("only COPY on PostgreSQL wrote them")
    ingest(node_event("broken", metrics={"entropy": 0.7}, metadata={"model": "m"}),
           node_event("healthy", metrics={"entropy": 0.2}),
           node_event("odd", metrics={"x": 1}))
    with connection.cursor() as cursor:
        cursor.execute("UPDATE provenance_node SET metrics = to_jsonb(metrics::text), metadata = to_jsonb(metadata::text)"
                       " WHERE product_id = 'broken'")
        cursor.execute("UPDATE provenance_node SET metrics = to_jsonb('not json'::text) WHERE product_id = 'odd'")
    try:
        migrate("0007_binary_digests")
        migrate("0008_repair_jsonb_strings")
    finally:
        migrate_to_newest()
    stored = {n.product_id: (n.metrics, n.metadata) for n in Node.objects.all()}
    assert stored == {"broken": ({"entropy": 0.7}, {"model": "m"}), "healthy": ({"entropy": 0.2}, {}),
                      "odd": ({}, {})}
