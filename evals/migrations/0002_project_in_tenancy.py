import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('evals', '0001_initial'),
        ('tenancy', '0001_initial'),
    ]

    # Project moved to tenancy (same table): the foreign keys change in Django's state only.
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='dataset',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='run',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
            ],
            database_operations=[],
        ),
    ]
