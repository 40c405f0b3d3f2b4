"""Citus-ready schema (issue 28): every table of our own apps is distributed by
project_id, so each carries a NOT NULL project_id column, in the models and in
the migrated database, unless it is one of the few reference or global tables
listed below with why. A distributed table's primary key and unique
constraints include project_id, and a foreign key between two distributed
tables matches on it (core/project_keys.py), as Citus requires."""

from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.db import IntegrityError, connection, models, transaction

from core.project_keys import ProjectForeignKey

# Tables of our apps that hold no one project's rows: under Citus a reference
# table (copied to every node) or a table on the coordinator alone.
GLOBAL_TABLES = {
    "provenance_project": "the projects themselves: a reference table, its id is every other table's project_id",
    "provenance_rootcausemark": "one row: how far the root-cause catch-up has read, across all projects",
    "metrics_watermark": "one row: how far the rollups have read, across all projects",
    "alerts_jobheartbeat": "one row per periodic job (the dead man's switch), not per project",
}

# Tables of our apps that hold one project's rows but are replicated to every
# node (Citus reference tables): small, and looked up before the project is
# known, so a lookup must not fan out to every shard. Their keys stay as they are.
REFERENCE_TABLES = {
    "provenance_apikey": "every API request finds its project by the key's hash, which must be unique across projects",
    "provenance_project_members": "the login finds which projects a user belongs to before a project is chosen",
    "tenancy_invitation": "an invitation link finds its project by the token's hash, unique across projects",
}
# Django's own tables that ours refer to: reference tables too.
OUTSIDE_REFERENCE_TABLES = {"auth_user"}

# Relations between distributed tables with no database constraint at all,
# by choice: the ingest writes them in bulk (provenance/models.py, NO_DB_CONSTRAINT).
UNCONSTRAINED = {
    ("provenance_node", "trace_id"): "the ingest writes a node with the trace it upserted in the same transaction",
    ("provenance_edge", "trace_id"): "the ingest writes an edge with its child's trace, upserted in the same transaction",
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


def distributed_models():
    return [m for m in our_models() if m._meta.db_table not in GLOBAL_TABLES | REFERENCE_TABLES.keys()]


def project_relations():
    """(model, field) for every foreign key from a distributed table to another."""
    distributed = {m._meta.db_table for m in distributed_models()}
    return [(model, field) for model in distributed_models() for field in model._meta.concrete_fields
            if isinstance(field, models.ForeignKey) and field.related_model._meta.db_table in distributed]


def database_constraints(kinds: str) -> list[tuple[str, str, str, list[str], str | None, list[str]]]:
    """(table, name, kind, columns, referenced table, referenced columns) of every
    constraint of `kinds` (p, u, f) in the migrated database."""
    with connection.cursor() as cursor:
        cursor.execute("""
            SELECT c.conrelid::regclass::text, c.conname, c.contype,
                   ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
                         JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i),
                   NULLIF(c.confrelid, 0)::regclass::text,
                   ARRAY(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
                         JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i)
            FROM pg_constraint c
            WHERE c.connamespace = 'public'::regnamespace AND c.contype = ANY(%s)""", [list(kinds)])
        return [(table, name, kind, list(cols), ref, list(ref_cols or []))
                for table, name, kind, cols, ref, ref_cols in cursor.fetchall()]


def test_reference_tables_are_ours_and_each_has_a_reason():
    ours = {model._meta.db_table for model in our_models()}
    assert REFERENCE_TABLES.keys() <= ours
    assert not REFERENCE_TABLES.keys() & GLOBAL_TABLES.keys()
    assert all(reason.strip() for reason in REFERENCE_TABLES.values())


def test_every_relation_between_distributed_tables_is_declared_on_the_project():
    """Django's single-column constraint is off and a ProjectForeignKey takes its
    place, unless the relation is one of the few deliberately unconstrained."""
    wrong = []
    for model, field in project_relations():
        key = (model._meta.db_table, field.column)
        declared = [c for c in model._meta.constraints if isinstance(c, ProjectForeignKey) and c.field == field.name]
        if key in UNCONSTRAINED:
            if declared or field.db_constraint:
                wrong.append(f"{key} is listed as unconstrained but has a constraint")
        elif field.db_constraint:
            wrong.append(f"{model.__name__}.{field.name}: a single-column constraint (set db_constraint=False)")
        elif len(declared) != 1:
            wrong.append(f"{model.__name__}.{field.name}: no ProjectForeignKey in Meta.constraints")
    assert wrong == [], "\n".join(wrong)


@pytest.mark.django_db
def test_every_key_of_a_distributed_table_includes_project_id():
    """Primary keys, unique constraints and unique indexes alike."""
    distributed = {m._meta.db_table for m in distributed_models()}
    wrong = [f"{table}.{name}: {kind} ({', '.join(cols)})" for table, name, kind, cols, _, _ in database_constraints("pu")
             if table in distributed and "project_id" not in cols]
    with connection.cursor() as cursor:
        cursor.execute("""
            SELECT i.indrelid::regclass::text, c.relname, pg_get_indexdef(i.indexrelid)
            FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE i.indisunique AND c.relnamespace = 'public'::regnamespace
              AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
              AND NOT EXISTS (SELECT 1 FROM unnest(i.indkey) k(n)
                              JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n
                              WHERE a.attname = 'project_id')""")
        wrong += [f"{table}.{name}: {definition}" for table, name, definition in cursor.fetchall() if table in distributed]
    assert wrong == [], "\n".join(wrong)


@pytest.mark.django_db
def test_foreign_keys_between_distributed_tables_match_on_the_project():
    distributed = {m._meta.db_table for m in distributed_models()}
    reference = REFERENCE_TABLES.keys() | GLOBAL_TABLES.keys() | OUTSIDE_REFERENCE_TABLES
    wrong = []
    for table, name, _, cols, ref, ref_cols in database_constraints("f"):
        if table in distributed and ref in distributed:
            if "project_id" not in cols or ref_cols[cols.index("project_id")] != "project_id":
                wrong.append(f"{table}.{name}: ({', '.join(cols)}) -> {ref} ({', '.join(ref_cols)})")
        elif table in reference and ref in distributed:
            wrong.append(f"{table}.{name}: a reference table cannot point at distributed {ref}")
        elif table in distributed and ref not in reference:
            wrong.append(f"{table}.{name}: points at {ref}, neither distributed nor a reference table")
    assert wrong == [], "\n".join(wrong)


@pytest.mark.django_db
def test_every_declared_relation_is_enforced_by_the_database():
    found = {(table, tuple(cols), ref, tuple(ref_cols)) for table, _, _, cols, ref, ref_cols in database_constraints("f")}
    missing = []
    for model, field in project_relations():
        if (model._meta.db_table, field.column) in UNCONSTRAINED:
            continue
        target = field.related_model._meta
        wanted = (model._meta.db_table, (field.column, "project_id"), target.db_table, (target.pk.column, "project_id"))
        if wanted not in found:
            missing.append(str(wanted))
    assert missing == [], "\n".join(missing)


@pytest.mark.django_db(transaction=True)
def test_a_row_cannot_point_at_another_projects_row(make_project):
    """What the composite keys buy besides distribution: a review of one
    project's trace filed under another project is refused at commit."""
    from provenance.models import Review, Trace

    (mine, _), (theirs, _) = make_project("mine"), make_project("theirs")
    trace = Trace.objects.create(project=theirs, trace_id="t-1")
    with pytest.raises(IntegrityError), transaction.atomic():
        Review.objects.create(project=mine, trace=trace, event_id="e-1", verdict="incorrect", timestamp=trace.created_at)
    assert Review.objects.count() == 0
    Review.objects.create(project=theirs, trace=trace, event_id="e-2", verdict="incorrect", timestamp=trace.created_at)
    assert Review.objects.filter(project=theirs, trace=trace).count() == 1
