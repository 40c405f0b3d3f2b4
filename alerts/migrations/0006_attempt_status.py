"""Attempts get a stored status. Those recorded before take theirs from
`success`; an unfinished one that a later attempt followed was interrupted."""

from django.db import migrations, models

BACKFILL = """
UPDATE alerts_deliveryattempt SET status = CASE
    WHEN success IS NOT NULL AND success THEN 'ok'
    WHEN success IS NOT NULL THEN 'failed'
    WHEN EXISTS (SELECT 1 FROM alerts_deliveryattempt later
                 WHERE later.delivery_id = alerts_deliveryattempt.delivery_id
                   AND later.number > alerts_deliveryattempt.number) THEN 'interrupted'
    ELSE 'in_progress' END
"""


class Migration(migrations.Migration):

    dependencies = [
        ("alerts", "0005_project_in_tenancy"),
    ]

    operations = [
        migrations.AddField(
            model_name="deliveryattempt",
            name="status",
            field=models.CharField(choices=[("in_progress", "in progress"), ("ok", "ok"), ("failed", "failed"),
                                            ("interrupted", "interrupted")], default="in_progress", max_length=12),
        ),
        migrations.RunSQL(BACKFILL, migrations.RunSQL.noop),
    ]
