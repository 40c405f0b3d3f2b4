"""Citus-ready schema (issue 28): every table of our own apps is distributed by
project_id, so each carries a NOT NULL project_id column, in the models and in
the migrated database, unless it is one of the few reference or global tables
listed below with why."""

from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.db import connection

# Tables of our apps that hold no one project's rows: under Citus a reference
# table (copied to every node) or a table on the coordinator alone.
GLOBAL_TABLES = {
    "provenance_project": "the projects themselves: a reference table, its id is every other table's project_id",
    "provenance_rootcausemark": "one row: how far the root-cause catch-up has read, across all projects",
    "metrics_watermark": "one row: how far the rollups have read, across all projects",
    "alerts_jobheartbeat": "one row per periodic job (the dead man's switch), not per project",
}

ROOT = Path(settings.BASE_DIR).resolve()


def our_models():
    """Every installed model whose app lives in this repository (not Django's
    contrib apps, not third-party packages), auto-created tables included."""
    found = []
    for config in apps.get_app_configs():
        path = Path(config.path).resolve()
        if not path.is_relative_to(ROOT) or ".venv" in path.parts or "site-packages" in path.parts:
            continue
        found += [m for m in config.get_models(include_auto_created=True) if m._meta.managed and not m._meta.proxy]
    return found


def project_field(model):
    return next((f for f in model._meta.concrete_fields if f.column == "project_id"), None)


def test_our_apps_are_found():
    labels = {model._meta.app_label for model in our_models()}
    assert {"tenancy", "provenance", "metrics", "alerts", "evals", "policy"} <= labels
    assert not labels & {"admin", "auth", "contenttypes", "sessions"}


def test_every_table_of_our_apps_has_a_not_null_project_id():
    wrong = []
    for model in our_models():
        table = model._meta.db_table
        if table in GLOBAL_TABLES:
            continue
        field = project_field(model)
        if field is None:
            wrong.append(f"{table} ({model.__name__}) has no project_id column")
        elif field.null:
            wrong.append(f"{table} ({model.__name__}): project_id is nullable")
    assert wrong == [], "\n".join(wrong)


@pytest.mark.django_db
def test_the_migrated_database_agrees():
    """The migrations (nullable, backfill, NOT NULL) left the columns as the models say."""
    wrong = []
    with connection.cursor() as cursor:
        for model in our_models():
            table = model._meta.db_table
            if table in GLOBAL_TABLES:
                continue
            columns = {c.name: c for c in connection.introspection.get_table_description(cursor, table)}
            column = columns.get("project_id")
            if column is None:
                wrong.append(f"{table} has no project_id column in the database")
            elif column.null_ok:
                wrong.append(f"{table}.project_id is nullable in the database")
    assert wrong == [], "\n".join(wrong)


def test_the_global_tables_are_ours_and_have_no_project_id():
    """Each listed table exists in our apps and truly has no project_id (else it should not be listed)."""
    ours = {model._meta.db_table: model for model in our_models()}
    assert GLOBAL_TABLES.keys() <= ours.keys(), GLOBAL_TABLES.keys() - ours.keys()
    assert [t for t in GLOBAL_TABLES if project_field(ours[t]) is not None] == []
    assert all(reason.strip() and "\n" not in reason for reason in GLOBAL_TABLES.values())
