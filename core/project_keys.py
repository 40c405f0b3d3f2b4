"""Keys that carry the project, so that every table of project data can be
distributed by `project_id` (Citus; docs/scaling.md).

A distributed table's primary key and unique constraints must include the
distribution column, and a foreign key between two distributed tables must
match on it as well. Django keeps `id` as the primary key (lookups, saves,
the admin), but in PostgreSQL the key is `(id, project_id)`: `id` first, so a
lookup or join by id alone uses the same index as before. Where two project
tables refer to each other, the model turns Django's single-column
constraint off (`db_constraint=False`) and declares a `ProjectForeignKey`,
which PostgreSQL enforces on `(column, project_id)`: a row can no longer
point at another project's row. On SQLite, the embedded single-process
default that nothing distributes, both are left out.
"""

from django.db import models
from django.db.migrations.operations.base import Operation

from core.dialect import is_postgres

PROJECT_COLUMN = "project_id"


class ProjectForeignKey(models.BaseConstraint):
    """`FOREIGN KEY (<field's column>, project_id) REFERENCES <target> (<its pk>,
    project_id)`, deferred to commit like Django's own constraints, so the
    order of a transaction's writes and Django's cascades stays free."""

    def __init__(self, *, field: str, name: str, violation_error_message=None):
        self.field = field
        super().__init__(name=name, violation_error_message=violation_error_message)

    def _definition(self, model, schema_editor) -> str | None:
        if not is_postgres(schema_editor.connection):
            return None
        field = model._meta.get_field(self.field)
        target = field.related_model._meta
        quote = schema_editor.quote_name
        return (f"FOREIGN KEY ({quote(field.column)}, {PROJECT_COLUMN}) "
                f"REFERENCES {quote(target.db_table)} ({quote(target.pk.column)}, {PROJECT_COLUMN}) "
                "DEFERRABLE INITIALLY DEFERRED")

    def constraint_sql(self, model, schema_editor):
        definition = self._definition(model, schema_editor)
        return definition and f"CONSTRAINT {schema_editor.quote_name(self.name)} {definition}"

    def create_sql(self, model, schema_editor):
        definition = self._definition(model, schema_editor)
        return definition and (f"ALTER TABLE {schema_editor.quote_name(model._meta.db_table)} "
                               f"ADD CONSTRAINT {schema_editor.quote_name(self.name)} {definition}")

    def remove_sql(self, model, schema_editor):
        if not is_postgres(schema_editor.connection):
            return None
        return (f"ALTER TABLE {schema_editor.quote_name(model._meta.db_table)} "
                f"DROP CONSTRAINT {schema_editor.quote_name(self.name)}")

    def validate(self, model, instance, exclude=None, using=None):
        # The foreign key field validates that its target exists; that the
        # target is in the same project is the writer's invariant, which the
        # database enforces at commit.
        pass

    def deconstruct(self):
        path, args, kwargs = super().deconstruct()
        kwargs["field"] = self.field
        return path, args, kwargs

    def __eq__(self, other):
        if isinstance(other, ProjectForeignKey):
            return self.name == other.name and self.field == other.field
        return super().__eq__(other)

    def __repr__(self):
        return f"<{self.__class__.__name__}: field={self.field!r} name={self.name!r}>"


class ProjectInPrimaryKey(Operation):
    """Migration step: the table's primary key becomes (pk column, project_id)
    in PostgreSQL. Django's state is unchanged (its pk is still the column).
    Foreign keys that reference the table's old key must be dropped before."""

    reversible = True
    reduces_to_sql = True

    def __init__(self, model_name: str):
        self.model_name = model_name

    def deconstruct(self):
        return self.__class__.__name__, [], {"model_name": self.model_name}

    def state_forwards(self, app_label, state):
        pass

    def _swap(self, app_label, schema_editor, to_state, with_project: bool):
        if not is_postgres(schema_editor.connection):
            return
        model = to_state.apps.get_model(app_label, self.model_name)
        table, column = model._meta.db_table, model._meta.pk.column
        with schema_editor.connection.cursor() as cursor:
            constraints = schema_editor.connection.introspection.get_constraints(cursor, table)
        name = next(name for name, info in constraints.items() if info["primary_key"])
        columns = f"{schema_editor.quote_name(column)}, {PROJECT_COLUMN}" if with_project else schema_editor.quote_name(column)
        schema_editor.execute(f"ALTER TABLE {schema_editor.quote_name(table)} DROP CONSTRAINT {schema_editor.quote_name(name)}, "
                              f"ADD CONSTRAINT {schema_editor.quote_name(name)} PRIMARY KEY ({columns})")

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        self._swap(app_label, schema_editor, to_state, with_project=True)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        self._swap(app_label, schema_editor, to_state, with_project=False)

    def describe(self):
        return f"Include project_id in the primary key of {self.model_name}"

    @property
    def migration_name_fragment(self):
        return f"{self.model_name.lower()}_project_in_pk"
