"""Reads that combine rollups, the watermark and raw rows must see one
snapshot, or a refresh committing in between would count rows twice."""

from contextlib import contextmanager

from django.db import transaction

from core.dialect import is_postgres
from core.replica import reading_alias, reading_connection


@contextmanager
def one_snapshot():
    # On the replica when the request reads there (core/replica.py): rollups and raw rows of one copy.
    connection = reading_connection()
    if not is_postgres(connection) or connection.in_atomic_block:
        # Inside a transaction already (tests, a caller's atomic block): its snapshot rules.
        yield
        return
    with transaction.atomic(using=reading_alias()):
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            # These reads are short; the planner's estimates for the correlated
            # subqueries can make JIT compile for a second to save milliseconds.
            cursor.execute("SET LOCAL jit = off")
            # A month of day statistics by group is tens of thousands of bins to
            # add up and rank: in memory, not in batches spilled to disk.
            cursor.execute("SET LOCAL work_mem = '64MB'")
        yield
