"""Multi-row writes that cost one statement per table, whatever the row count.

On PostgreSQL: plain appends of many rows are a COPY; conflict-checked inserts
of many rows are a COPY into a session-local staging table and one
`INSERT … SELECT … ON CONFLICT`; small ones are `INSERT … SELECT FROM
unnest(array, …)`, one parameter per column. Other databases (the embedded
SQLite default) get a portable multi-row `VALUES`, chunked under the driver's
parameter limit.
"""

import functools
import weakref
from contextlib import contextmanager

from django.db import connection, transaction

from core.dialect import is_postgres

SQLITE_MAX_PARAMS = 30000
# From this many rows on, PostgreSQL gets COPY into a staging table and one
# INSERT … SELECT: COPY's row encoding runs in C, a parameter array's does not.
COPY_FROM_ROWS = 200
_staged: "weakref.WeakKeyDictionary[object, set[str]]" = weakref.WeakKeyDictionary()


@contextmanager
def bound_cursor():
    """A cursor with server-side parameter binding on PostgreSQL.

    Django's psycopg cursors bind client-side, quoting every element of a
    1,000-item array into the SQL text; server-side binding sends the array as
    one parameter. Wrapped like Django's own cursors, so query logging and
    `assertNumQueries` still see every statement."""
    if not is_postgres():
        with connection.cursor() as cursor:
            yield cursor
        return
    import psycopg

    connection.ensure_connection()
    raw = psycopg.Cursor(connection.connection)
    try:
        yield connection.make_debug_cursor(raw) if connection.queries_logged else connection.make_cursor(raw)
    finally:
        raw.close()


def insert_many(
    table: str,
    columns: list[str],
    pg_types: list[str],
    rows: list[tuple],
    *,
    on_conflict: str = "",
    returning: str = "",
) -> list[tuple]:
    """Inserts `rows`; returns what `returning` names for the rows written."""
    if not rows:
        return []
    column_list = ", ".join(columns)
    suffix = f" {on_conflict}" if on_conflict else ""
    suffix += f" RETURNING {returning}" if returning else ""
    with bound_cursor() as cursor:
        if is_postgres() and len(rows) >= COPY_FROM_ROWS and not on_conflict and not returning:
            copy_rows(table, columns, rows, pg_types)
            return []
        if is_postgres() and len(rows) >= COPY_FROM_ROWS:
            stage = _staging_table(cursor, table.split()[0], columns)
            _copy_binary(cursor, stage, columns, pg_types, rows)
            cursor.execute(f"INSERT INTO {table} ({column_list}) SELECT {column_list} FROM {stage}{suffix}")
            result = cursor.fetchall() if returning else []
            cursor.execute(f"TRUNCATE {stage}")
            return result
        if is_postgres():
            # jsonb travels as text[] and is cast per row: psycopg has no jsonb[] adapter for lists of str.
            arrays = ", ".join(f"%s::{'text' if t == 'jsonb' else t}[]" for t in pg_types)
            selected = ", ".join(f"u.{c}::jsonb" if t == "jsonb" else f"u.{c}" for c, t in zip(columns, pg_types))
            sql = f"INSERT INTO {table} ({column_list}) SELECT {selected} FROM unnest({arrays}) AS u({column_list}){suffix}"
            cursor.execute(sql, [list(col) for col in zip(*rows)])
            return cursor.fetchall() if returning else []
        result = []
        per_row = len(columns)
        chunk = max(1, SQLITE_MAX_PARAMS // per_row)
        placeholder = "(" + ", ".join(["%s"] * per_row) + ")"
        for start in range(0, len(rows), chunk):
            part = rows[start : start + chunk]
            sql = f"INSERT INTO {table} ({column_list}) VALUES {', '.join([placeholder] * len(part))}{suffix}"
            cursor.execute(sql, [value for row in part for value in row])
            if returning:
                result.extend(cursor.fetchall())
        return result


def copy_rows(table: str, columns: list[str], rows: list[tuple], pg_types: list[str]) -> None:
    """Appends rows with COPY (PostgreSQL); callers have ruled out conflicts."""
    if not rows:
        return
    # Django does not translate errors raised by COPY: a concurrent batch's row
    # must surface as django.db.IntegrityError for the caller's fallback to run.
    with connection.cursor() as cursor, connection.wrap_database_errors:
        _copy_binary(cursor, table, columns, pg_types, rows)


def _copy_binary(cursor, table: str, columns: list[str], pg_types: list[str], rows: list[tuple]) -> None:
    """COPY in PostgreSQL's binary format: no text quoting and escaping of every
    value on our side, no parsing of it on the server's. jsonb values arrive as
    JSON text (str), as everywhere else in this module."""
    # On the cursor itself: a cursor copies its connection's adapters when it is
    # made, so a dumper registered on the connection missed the first COPY of
    # every new connection, which then stored each jsonb value as a JSON string.
    cursor.adapters.register_dumper(None, _jsonb_text_binary_dumper())
    with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types([COPY_TYPE_NAMES.get(t, t) for t in pg_types])
        for row in rows:
            copy.write_row(row)


# Names SQL casts accept that psycopg's type registry does not.
COPY_TYPE_NAMES = {"int": "integer"}


@functools.cache
def _jsonb_text_binary_dumper():
    """psycopg's binary jsonb dumper serialises a Python object; ours are JSON
    text already. Registered by type oid only (class None), so it is used where
    COPY names the column types and nowhere else."""
    from psycopg import postgres
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    class JsonbTextBinaryDumper(Dumper):
        format = Format.BINARY
        oid = postgres.types["jsonb"].oid

        def dump(self, obj):
            return b"\x01" + obj.encode()  # jsonb's binary format: a version byte, then the text

    return JsonbTextBinaryDumper


def _staging_table(cursor, table: str, columns: list[str]) -> str:
    """A session-local temp table with the target's column types, created once
    per database connection (pooled connections keep it)."""
    stage = f"stage_{table}"
    raw = connection.connection
    known = _staged.setdefault(raw, set())
    if stage not in known:
        cursor.execute(
            f"CREATE TEMP TABLE IF NOT EXISTS {stage} AS SELECT {', '.join(columns)} FROM {table} WITH NO DATA"
        )
        # Remembered only once committed: a rolled-back transaction takes the table with it.
        transaction.on_commit(lambda: known.add(stage))
    return stage


def in_list(values: list, array_type: str = "") -> tuple[str, list]:
    """An SQL membership test and its parameters: `= ANY(%s)` on PostgreSQL (one
    parameter, a stable statement), `IN (%s, …)` elsewhere.

    `array_type` ("bigint[]") casts the array to the column's type. psycopg
    sends a list of small ints as smallint[] or integer[], and `bigint =
    ANY(smallint[])` cannot be hashed: where the planner tests it row by row
    (a filter, not an index condition) each row is compared with every
    element, seconds for a few thousand ids over a large table."""
    if is_postgres():
        return f"= ANY(%s::{array_type})" if array_type else "= ANY(%s)", [list(values)]
    return "IN (" + ", ".join(["%s"] * len(values)) + ")", list(values)
