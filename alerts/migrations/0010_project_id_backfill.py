"""Issue 28, step 2 of 3: each row takes its parent's project, one bulk UPDATE
per table. A correlated subquery rather than UPDATE … FROM, so SQLite (the
embedded mode) runs the same statement as PostgreSQL."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("alerts", "0009_project_id_nullable")]

    operations = [
        migrations.RunSQL(
            "UPDATE alerts_destination SET project_id = "
            "(SELECT p.project_id FROM alerts_alertrule p WHERE p.id = alerts_destination.rule_id)",
            migrations.RunSQL.noop,
        ),
        migrations.RunSQL(
            "UPDATE alerts_deliveryattempt SET project_id = "
            "(SELECT p.project_id FROM alerts_delivery p WHERE p.id = alerts_deliveryattempt.delivery_id)",
            migrations.RunSQL.noop,
        ),
    ]
