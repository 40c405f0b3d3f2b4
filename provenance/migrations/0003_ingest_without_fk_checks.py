import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("provenance", "0002_health_reports"),
    ]

    operations = [
        migrations.AlterField(
            model_name="edge",
            name="project",
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="provenance.project"),
        ),
        migrations.AlterField(
            model_name="edge",
            name="trace",
            field=models.ForeignKey(db_constraint=False, help_text="The child's trace.", on_delete=django.db.models.deletion.CASCADE, related_name="+", to="provenance.trace"),
        ),
        migrations.AlterField(
            model_name="ingestedevent",
            name="project",
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="provenance.project"),
        ),
        migrations.AlterField(
            model_name="node",
            name="project",
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="provenance.project"),
        ),
        migrations.AlterField(
            model_name="node",
            name="trace",
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name="nodes", to="provenance.trace"),
        ),
    ]
