"""Multi-row writes that cost one statement per table, whatever the row count.

PostgreSQL gets `INSERT … SELECT FROM unnest(array, …)`: one statement with one
parameter per column, so a 1,000-row batch is neither a parameter explosion nor
a round trip per row. Other databases (the embedded SQLite default) get a
portable multi-row `VALUES`, chunked under the driver's parameter limit.
"""

from django.db import connection

SQLITE_MAX_PARAMS = 30000


def is_postgres() -> bool:
    return connection.vendor == "postgresql"


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
    with connection.cursor() as cursor:
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


def in_list(values: list) -> tuple[str, list]:
    """An SQL membership test and its parameters: `= ANY(%s)` on PostgreSQL (one
    parameter, a stable statement), `IN (%s, …)` elsewhere."""
    if is_postgres():
        return "= ANY(%s)", [list(values)]
    return "IN (" + ", ".join(["%s"] * len(values)) + ")", list(values)
