import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('alerts', '0005_project_in_tenancy'),
        ('evals', '0002_project_in_tenancy'),
        ('metrics', '0005_project_in_tenancy'),
        ('policy', '0002_project_in_tenancy'),
        ('provenance', '0011_root_causes'),
        ('tenancy', '0001_initial'),
    ]

    # Project and ApiKey now live in tenancy, on the same tables: they leave
    # provenance's state only, after every foreign key points at tenancy's.
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='project',
                    name='members',
                ),
                migrations.AlterField(
                    model_name='edge',
                    name='project',
                    field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='healthreport',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='fuse',
                    name='project',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='finalanswer',
                    name='project',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='review',
                    name='project',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='answercause',
                    name='project',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='trace',
                    name='project',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='traces', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='retentionrun',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='retention_runs', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='escalation',
                    name='project',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='ingestedevent',
                    name='project',
                    field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='node',
                    name='project',
                    field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='healthfinding',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.DeleteModel(
                    name='ApiKey',
                ),
                migrations.DeleteModel(
                    name='Project',
                ),
            ],
            database_operations=[],
        ),
    ]
