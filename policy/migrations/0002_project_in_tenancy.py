import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('policy', '0001_initial'),
        ('tenancy', '0001_initial'),
    ]

    # Project moved to tenancy (same table): the foreign keys change in Django's state only.
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='policyversion',
                    name='project',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
            ],
            database_operations=[],
        ),
    ]
