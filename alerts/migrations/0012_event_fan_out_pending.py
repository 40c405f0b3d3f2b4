"""Issue 25: the tick marks the events it sends and a fan-out after its commit makes
their deliveries; the partial index serves the periodic sweep for lost fan-outs."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('alerts', '0011_project_id_not_null'),
        ('tenancy', '0003_scopes_roles_invitations_audit'),
    ]

    operations = [
        migrations.AddField(
            model_name='alertevent',
            name='fan_out_pending',
            field=models.BooleanField(default=False, help_text='To be sent: its deliveries are not made yet.'),
        ),
        migrations.AddIndex(
            model_name='alertevent',
            index=models.Index(condition=models.Q(('fan_out_pending', True)), fields=['id'], name='alertevent_fan_out_pending'),
        ),
    ]
