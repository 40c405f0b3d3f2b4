"""Keys that carry the project (issue 28; core/project_keys.py): single-column
foreign keys between project tables are dropped, every primary key becomes
(id, project_id), then the foreign keys come back on (column, project_id).
PostgreSQL only; on SQLite the primary-key steps do nothing."""

import alerts.models
import core.project_keys
import django.db.models.deletion
from django.db import migrations, models

from core.project_keys import ProjectInPrimaryKey


class Migration(migrations.Migration):

    dependencies = [
        ('alerts', '0012_event_fan_out_pending'),
        ('tenancy', '0003_scopes_roles_invitations_audit'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='deliveryattempt',
            name='attempt_unique_number',
        ),
        migrations.AlterField(
            model_name='alertevent',
            name='rule',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='events', to='alerts.alertrule'),
        ),
        migrations.AlterField(
            model_name='alertevent',
            name='silence',
            field=models.ForeignKey(blank=True, db_constraint=False, help_text='The silence active when it was recorded: nothing was sent, ever.', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='events', to='alerts.silence'),
        ),
        migrations.AlterField(
            model_name='delivery',
            name='destination',
            field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='deliveries', to='alerts.destination'),
        ),
        migrations.AlterField(
            model_name='delivery',
            name='event',
            field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='deliveries', to='alerts.alertevent'),
        ),
        migrations.AlterField(
            model_name='delivery',
            name='rule',
            field=models.ForeignKey(blank=True, db_constraint=False, help_text='None for a project notice (checks not running).', null=True, on_delete=django.db.models.deletion.CASCADE, related_name='deliveries', to='alerts.alertrule'),
        ),
        migrations.AlterField(
            model_name='delivery',
            name='webhook_id',
            field=models.CharField(default=alerts.models.new_webhook_id, max_length=64),
        ),
        migrations.AlterField(
            model_name='deliveryattempt',
            name='delivery',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='attempts', to='alerts.delivery'),
        ),
        migrations.AlterField(
            model_name='destination',
            name='rule',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='destinations', to='alerts.alertrule'),
        ),
        migrations.AlterField(
            model_name='destination',
            name='shared',
            field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='uses', to='alerts.shareddestination'),
        ),
        migrations.AlterField(
            model_name='inboxmessage',
            name='delivery',
            field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='alerts.delivery'),
        ),
        migrations.AlterField(
            model_name='inboxmessage',
            name='destination',
            field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='alerts.destination'),
        ),
        migrations.AlterField(
            model_name='silence',
            name='rule',
            field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='silences', to='alerts.alertrule'),
        ),
        ProjectInPrimaryKey('alertrule'),
        ProjectInPrimaryKey('shareddestination'),
        ProjectInPrimaryKey('destination'),
        ProjectInPrimaryKey('alertevent'),
        ProjectInPrimaryKey('silence'),
        ProjectInPrimaryKey('delivery'),
        ProjectInPrimaryKey('deliveryattempt'),
        ProjectInPrimaryKey('inboxmessage'),
        ProjectInPrimaryKey('stallednotice'),
        migrations.AddConstraint(
            model_name='alertevent',
            constraint=core.project_keys.ProjectForeignKey(field='rule', name='alertevent_rule_in_project'),
        ),
        migrations.AddConstraint(
            model_name='alertevent',
            constraint=core.project_keys.ProjectForeignKey(field='silence', name='alertevent_silence_in_project'),
        ),
        migrations.AddConstraint(
            model_name='delivery',
            constraint=models.UniqueConstraint(fields=('webhook_id', 'project'), name='delivery_webhook_id_unique'),
        ),
        migrations.AddConstraint(
            model_name='delivery',
            constraint=core.project_keys.ProjectForeignKey(field='rule', name='delivery_rule_in_project'),
        ),
        migrations.AddConstraint(
            model_name='delivery',
            constraint=core.project_keys.ProjectForeignKey(field='event', name='delivery_event_in_project'),
        ),
        migrations.AddConstraint(
            model_name='delivery',
            constraint=core.project_keys.ProjectForeignKey(field='destination', name='delivery_destination_in_project'),
        ),
        migrations.AddConstraint(
            model_name='deliveryattempt',
            constraint=models.UniqueConstraint(fields=('delivery', 'number', 'project'), name='attempt_unique_number'),
        ),
        migrations.AddConstraint(
            model_name='deliveryattempt',
            constraint=core.project_keys.ProjectForeignKey(field='delivery', name='attempt_delivery_in_project'),
        ),
        migrations.AddConstraint(
            model_name='destination',
            constraint=core.project_keys.ProjectForeignKey(field='rule', name='destination_rule_in_project'),
        ),
        migrations.AddConstraint(
            model_name='destination',
            constraint=core.project_keys.ProjectForeignKey(field='shared', name='destination_shared_in_project'),
        ),
        migrations.AddConstraint(
            model_name='inboxmessage',
            constraint=core.project_keys.ProjectForeignKey(field='destination', name='inbox_destination_in_project'),
        ),
        migrations.AddConstraint(
            model_name='inboxmessage',
            constraint=core.project_keys.ProjectForeignKey(field='delivery', name='inbox_delivery_in_project'),
        ),
        migrations.AddConstraint(
            model_name='silence',
            constraint=core.project_keys.ProjectForeignKey(field='rule', name='silence_rule_in_project'),
        ),
    ]
