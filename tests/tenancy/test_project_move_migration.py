"""Project and ApiKey moved from provenance to tenancy in Django's state only:
a database migrated to the last schema before the move, with data in it, comes
forward with every row, key and membership intact, and nothing of its schema
changed. Runs on PostgreSQL and on the embedded SQLite default."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from provenance.models import Node, Trace
from tenancy.models import ApiKey, Project
from tests.support.events import node_event

pytestmark = pytest.mark.sqlite_smoke

MOVE_MIGRATIONS = ("_project_in_tenancy", "_project_moves_to_tenancy")
MOVED_TABLES = ("provenance_project", "provenance_apikey", "provenance_project_members")


def before_the_move() -> list[tuple[str, str | None]]:
    """Every app's last migration before the move (what the move's migrations
    each follow in their own app), and no tenancy at all."""
    targets = [("tenancy", None)]
    for (app, name), migration in MigrationExecutor(connection).loader.disk_migrations.items():
        if name.endswith(MOVE_MIGRATIONS):
            targets += [dependency for dependency in migration.dependencies if dependency[0] == app]
    return targets


def the_move() -> list[tuple[str, str]]:
    """The move's migrations themselves (and tenancy's first): later migrations
    of any app may change the schema; the move itself must not."""
    targets = [("tenancy", "0001_initial")]
    for (app, name) in MigrationExecutor(connection).loader.disk_migrations:
        if name.endswith(MOVE_MIGRATIONS):
            targets.append((app, name))
    return targets


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor


def migrate_to_the_end():
    executor = MigrationExecutor(connection)
    migrate(executor.loader.graph.leaf_nodes())


def schema() -> dict:
    """Every table's columns and constraints, as the database describes them."""
    with connection.cursor() as cursor:
        introspection = connection.introspection
        return {
            table: (
                sorted(column.name for column in introspection.get_table_description(cursor, table)),
                sorted(
                    repr((c["columns"], c["unique"], c["primary_key"], c["foreign_key"], c["index"]))
                    for c in introspection.get_constraints(cursor, table).values()
                ),
            )
            for table in sorted(introspection.table_names(cursor))
            if table != "django_migrations"
        }


def test_an_existing_database_keeps_its_projects_keys_and_members(transactional_db, ingest, project_and_key):
    project, raw_key = project_and_key
    ingest(node_event("n1", "t-before"))
    member = get_user_model().objects.create_user("ada", password="x")
    project.members.add(member)
    # A transactional test before this one may have flushed them: as a deployed database has them.
    ContentType.objects.clear_cache()
    ContentType.objects.get_for_models(Project, ApiKey)
    schema_now = schema()
    try:
        targets = before_the_move()
        executor = migrate(targets)
        state = executor.loader.project_state(targets[1:])
        assert ("provenance", "project") in state.models and ("tenancy", "project") not in state.models
        assert ContentType.objects.filter(app_label="provenance", model="project").exists()
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO provenance_project (slug, name, high_uncertainty_threshold, created_at, "
                           "keep_full_below) VALUES ('written-before', 'old', 0.5, %s, 0.8)", ["2026-11-30T00:00:00Z"])
        before = schema()
        migrate(the_move())
        assert schema() == before

        migrate_to_the_end()
    finally:
        migrate_to_the_end()

    assert schema() == schema_now
    assert ContentType.objects.filter(app_label="tenancy", model__in=["project", "apikey"]).count() == 2
    assert not ContentType.objects.filter(app_label="provenance", model__in=["project", "apikey"]).exists()
    assert Project._meta.db_table == "provenance_project" and ApiKey._meta.db_table == "provenance_apikey"
    assert set(Project.objects.values_list("slug", flat=True)) == {project.slug, "written-before"}
    assert list(Project.objects.get(pk=project.pk).members.all()) == [member]
    assert Trace.objects.get(trace_id="t-before").project == project
    assert Node.objects.get(product_id="n1").project_id == project.pk
    # The key still authenticates, and new rows still get ids from the same sequence.
    assert ingest(node_event("n2", "t-after"))["errors"] == []
    later = Project.objects.create(slug="after-the-move")
    assert later.pk > Project.objects.get(slug="written-before").pk
    assert ApiKey.objects.filter(project=project, revoked_at__isnull=True).count() == 1
    assert raw_key.startswith("dd_")


def test_a_fresh_database_has_the_tables_under_their_old_names(db):
    with connection.cursor() as cursor:
        tables = set(connection.introspection.table_names(cursor))
    assert set(MOVED_TABLES) <= tables
    # No moved table was made again under a new name (tenancy's own new tables may be).
    assert not {"tenancy_project", "tenancy_apikey", "tenancy_project_members", "tenancy_membership"} & tables
