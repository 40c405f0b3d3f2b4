import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('metrics', '0004_day_stats'),
        ('tenancy', '0001_initial'),
    ]

    # Project moved to tenancy (same table): the foreign keys change in Django's state only.
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='dayhistogram',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='daystat',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='hourescalation',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='hourfusereason',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='hourrollup',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='policyhour',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='policyitemhour',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='reviewtarget',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='rolledproject',
                    name='project',
                    field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='tracespan',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
            ],
            database_operations=[],
        ),
    ]
