"""Reads that combine rollups, the watermark and raw rows must see one
snapshot, or a refresh committing in between would count rows twice."""

from contextlib import contextmanager

from django.db import connection, transaction

from core.dialect import is_postgres


@contextmanager
def one_snapshot():
    if not is_postgres() or connection.in_atomic_block:
        # Inside a transaction already (tests, a caller's atomic block): its snapshot rules.
        yield
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            # These reads are short; the planner's estimates for the correlated
            # subqueries can make JIT compile for a second to save milliseconds.
            cursor.execute("SET LOCAL jit = off")
        yield
