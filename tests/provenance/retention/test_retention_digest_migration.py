"""Digests stored before they were kept as bytes (migration 0007) still match
their text afterwards, and the way back restores the hex."""

import hashlib

import pytest
from django.db import connection

from provenance.models import Node
from tests.support.events import node_event
from tests.support.migrating import migrate, migrate_to_newest

TEXT = "an answer summarized before the digests were bytes. " * 8
HEX = hashlib.sha256(TEXT.encode()).hexdigest()
BEFORE, AFTER = "0006_round_limit_finding", "0007_binary_digests"


def stored_type() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT data_type FROM information_schema.columns "
                       "WHERE table_name = 'provenance_node' AND column_name = 'content_sha256'")
        return cursor.fetchone()[0]


def test_hex_digests_are_decoded_in_place(transactional_db, ingest):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite keeps the hex text; nothing to convert")
    ingest(node_event("old", "t-old", content=TEXT))
    try:
        migrate(BEFORE)
        with connection.cursor() as cursor:
            cursor.execute("UPDATE provenance_node SET content_sha256 = %s, summarized_at = now()", [HEX])
        migrate(AFTER)
        assert stored_type() == "bytea"
        assert Node.objects.only("content_sha256").get(product_id="old").content_sha256 == HEX
        assert Node.objects.filter(content_sha256=HEX).count() == 1
        migrate(BEFORE)
        with connection.cursor() as cursor:
            cursor.execute("SELECT content_sha256 FROM provenance_node")
            assert cursor.fetchone()[0] == HEX
    finally:
        migrate_to_newest()
    assert stored_type() == "bytea"
