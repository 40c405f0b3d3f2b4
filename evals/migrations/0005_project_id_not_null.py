"""Issue 28, step 3 of 3: project_id is NOT NULL. A migration of its own, so
the backfill's deferred foreign-key checks have run before the ALTER TABLE."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("evals", "0004_project_id_backfill")]

    operations = [
        migrations.AlterField(
            model_name="datasetversion",
            name="project",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="tenancy.project"),
        ),
        migrations.AlterField(
            model_name="item",
            name="project",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="tenancy.project"),
        ),
        migrations.AlterField(
            model_name="result",
            name="project",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="tenancy.project"),
        ),
    ]
