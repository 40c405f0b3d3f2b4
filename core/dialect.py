"""Which SQL the database speaks, decided in one place.

PostgreSQL is the deployment; SQLite is the embedded default (no services).
Code that writes SQL of its own asks `dialect()` (or `is_postgres()`) rather
than reading `connection.vendor`, so a third database would be one more member
here and every place that must care would be found by its name."""

from enum import StrEnum

from django.db import connection as default_connection


class SQLDialect(StrEnum):
    POSTGRESQL = "postgresql"
    SQLITE = "sqlite"


def dialect(connection=None) -> SQLDialect:
    """The dialect of `connection` (default: the default database's); any other
    database is refused here, once, rather than half-served by a fallback."""
    return SQLDialect((connection or default_connection).vendor)


def is_postgres(connection=None) -> bool:
    return dialect(connection) is SQLDialect.POSTGRESQL
