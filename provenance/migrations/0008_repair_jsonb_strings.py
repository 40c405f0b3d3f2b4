"""Nodes' metrics and metadata written by the first COPY of a database
connection were stored as JSON strings holding the object's text (a jsonb
dumper registered after the cursor copied its adapters). Both are objects by
contract, so a string there is that defect: it is parsed back into its object."""

import json

from django.db import migrations

BATCH = 1000


def repair(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, metrics #>> '{}', metadata #>> '{}', jsonb_typeof(metrics), jsonb_typeof(metadata) "
            "FROM provenance_node WHERE jsonb_typeof(metrics) = 'string' OR jsonb_typeof(metadata) = 'string'"
        )
        broken = cursor.fetchall()
        fixed = []
        for pk, metrics, metadata, metrics_type, metadata_type in broken:
            fixed.append((parsed(metrics) if metrics_type == "string" else None,
                          parsed(metadata) if metadata_type == "string" else None, pk))
        for start in range(0, len(fixed), BATCH):
            cursor.executemany(
                "UPDATE provenance_node SET metrics = COALESCE(%s::jsonb, metrics), "
                "metadata = COALESCE(%s::jsonb, metadata) WHERE id = %s",
                fixed[start:start + BATCH],
            )


def parsed(text: str) -> str:
    """The object the string held, as JSON text; an empty object when it held no object."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    return json.dumps(value if isinstance(value, dict) else {})


class Migration(migrations.Migration):
    dependencies = [("provenance", "0007_binary_digests")]
    operations = [migrations.RunPython(repair, migrations.RunPython.noop, elidable=True)]
