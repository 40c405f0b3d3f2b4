"""Moving the test database along the provenance migrations, and back to the
newest one: a test that leaves it at an old migration breaks every test after it."""

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate(target: str) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([("provenance", target)])


def migrate_to_newest() -> None:
    """Every app, not only provenance: going back unapplied the migrations of
    the apps that depend on it too."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
