"""Issue 28, step 1 of 3: alerts_destination, alerts_deliveryattempt get a nullable project_id."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("alerts", "0008_dead_mans_switch"),
        ("tenancy", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="destination",
            name="project",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                    to="tenancy.project"),
        ),
        migrations.AddField(
            model_name="deliveryattempt",
            name="project",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                    to="tenancy.project"),
        ),
    ]
