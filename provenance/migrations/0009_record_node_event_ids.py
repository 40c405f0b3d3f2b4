"""Node events' ids go into the idempotency record with every other event's,
so an id is one event across batches and types. The nodes stored before are
recorded here; ids two of them already share (the defect this closes) are
recorded once."""

from django.db import migrations

RECORD_NODES = (
    "INSERT INTO provenance_ingestedevent (project_id, event_id, received_at) "
    "SELECT project_id, event_id, received_at FROM provenance_node WHERE true "
    "ON CONFLICT (project_id, event_id) DO NOTHING"
)


class Migration(migrations.Migration):
    dependencies = [("provenance", "0008_repair_jsonb_strings")]

    operations = [migrations.RunSQL(RECORD_NODES, migrations.RunSQL.noop)]
