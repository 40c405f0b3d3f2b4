"""A benchmark's own scratch PostgreSQL database, on the server and as the user
that DATABASE_URL names, so a bench never touches the database it was pointed at.

    with scratch_django("denoise_bench_x", keep=args.keep) as url:
        from tenancy.models import Project  # Django is set up and migrated here
        ...
"""

import os
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/postgres"


def scratch_database_url(name: str) -> str:
    """DATABASE_URL with its database name replaced by `name`."""
    base = os.environ.get("DATABASE_URL", DEFAULT_URL)
    return urlunsplit(urlsplit(base)._replace(path="/" + name))


def _on_server(url: str, statement: str) -> None:
    import psycopg

    # CREATE/DROP DATABASE cannot run inside the database itself nor in a transaction.
    admin = urlunsplit(urlsplit(url)._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(statement)


def _name(url: str) -> str:
    return urlsplit(url).path[1:]


def drop_database(url: str) -> None:
    # FORCE: a server process or thread of the bench may still hold a connection.
    _on_server(url, f'DROP DATABASE IF EXISTS "{_name(url)}" WITH (FORCE)')


def recreate_database(url: str) -> None:
    drop_database(url)
    _on_server(url, f'CREATE DATABASE "{_name(url)}"')


def database_exists(url: str) -> bool:
    import psycopg

    admin = urlunsplit(urlsplit(url)._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [_name(url)]).fetchone() is not None


@contextmanager
def scratch_django(name: str, keep: bool = False, reuse: bool = False) -> Iterator[str]:
    """Recreates database `name` (with `reuse`, keeps it when it exists), sets
    Django up on it and migrates it; yields its URL (also left in DATABASE_URL
    for subprocesses); drops it on the way out unless `keep`."""
    url = scratch_database_url(name)
    if not (reuse and database_exists(url)):
        recreate_database(url)
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "denoise_dashboard.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections

    try:
        call_command("migrate", verbosity=0)
        yield url
    finally:
        connections.close_all()
        if not keep:
            drop_database(url)
