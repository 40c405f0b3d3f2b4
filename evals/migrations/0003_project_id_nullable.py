"""Issue 28, step 1 of 3: evals_datasetversion, evals_item, evals_result get a nullable project_id."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("evals", "0002_project_in_tenancy"),
        ("tenancy", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="datasetversion",
            name="project",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                    to="tenancy.project"),
        ),
        migrations.AddField(
            model_name="item",
            name="project",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                    to="tenancy.project"),
        ),
        migrations.AddField(
            model_name="result",
            name="project",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                    to="tenancy.project"),
        ),
    ]
