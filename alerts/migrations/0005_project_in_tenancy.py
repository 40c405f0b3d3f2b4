import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('alerts', '0004_shared_destinations_kinds'),
        ('tenancy', '0001_initial'),
    ]

    # Project moved to tenancy (same table): the foreign keys change in Django's state only.
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='alertevent',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='alertrule',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='alert_rules', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='delivery',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='inboxmessage',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='tenancy.project'),
                ),
                migrations.AlterField(
                    model_name='shareddestination',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='shared_destinations', to='tenancy.project'),
                ),
            ],
            database_operations=[],
        ),
    ]
