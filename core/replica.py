"""Reads on a PostgreSQL streaming replica (the contract's "Read replica").

Whether a request may read on the replica is decided once per request by the
project package (`denoise_dashboard/replica_reads.py`); below that, every read
goes where `reading_alias()` says: the ORM through `ReplicaRouter`, raw SQL
through `reading_connection()`. Every write goes to the primary."""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import DEFAULT_DB_ALIAS, connections

REPLICA = "replica"

# Who is asking must be known the moment it is created (a key just issued, a
# session just signed in), so these are read on the primary whatever the request.
PRIMARY_ONLY_APPS = frozenset({"auth", "sessions", "contenttypes", "admin", "tenancy"})
PRIMARY_ONLY_MODELS = frozenset({"provenance.project", "provenance.apikey"})

_reads_from: ContextVar[str] = ContextVar("reads_from", default=DEFAULT_DB_ALIAS)


def reading_alias() -> str:
    return _reads_from.get()


def reading_connection():
    """The connection a read of project data uses (raw SQL's twin of the router)."""
    return connections[_reads_from.get()]


@contextmanager
def reads_from(alias: str) -> Iterator[None]:
    token = _reads_from.set(alias)
    try:
        yield
    finally:
        _reads_from.reset(token)


def primary_only(model) -> bool:
    return model._meta.app_label in PRIMARY_ONLY_APPS or model._meta.label_lower in PRIMARY_ONLY_MODELS


class ReplicaRouter:
    def db_for_read(self, model, **hints):
        return DEFAULT_DB_ALIAS if primary_only(model) else _reads_from.get()

    def db_for_write(self, model, **hints):
        if not primary_only(model):
            # A request that writes project data reads the rest of it where it wrote it
            # (a key's last use or a session is bookkeeping, not what the request reads).
            _reads_from.set(DEFAULT_DB_ALIAS)
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints):
        return True  # the replica is a copy of the primary: the same rows

    def allow_migrate(self, db, app_label, **hints):
        return db == DEFAULT_DB_ALIAS
