"""The summary digests as their 32 bytes on PostgreSQL instead of 64 hex
characters (see provenance/retention/digest.py). The stored hex is decoded in
place; SQLite keeps its hex text, so there only the model state changes.
And the index retention's "reviewed" rule looks reviews up by."""

from django.db import migrations, models

import provenance.retention.digest

COLUMNS = ("content_sha256", "raw_input_sha256")


def alter(to_bytes: bool):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for column in COLUMNS:
            target = f"bytea USING decode({column}, 'hex')" if to_bytes else \
                f"varchar(64) USING encode({column}, 'hex')"
            schema_editor.execute(f"ALTER TABLE provenance_node ALTER COLUMN {column} TYPE {target}")
    return run


class Migration(migrations.Migration):

    dependencies = [
        ('provenance', '0006_round_limit_finding'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(alter(True), alter(False))],
            state_operations=[
                migrations.AlterField(
                    model_name='node',
                    name=column,
                    field=provenance.retention.digest.Sha256Field(blank=True, null=True),
                )
                for column in COLUMNS
            ],
        ),
        migrations.AddIndex(
            model_name='review',
            index=models.Index(fields=['project', 'product_id'], name='review_product'),
        ),
    ]
