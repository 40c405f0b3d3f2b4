"""Keys that carry the project (issue 28; core/project_keys.py): single-column
foreign keys between project tables are dropped, every primary key becomes
(id, project_id), then the foreign keys come back on (column, project_id).
PostgreSQL only; on SQLite the primary-key steps do nothing."""

import core.project_keys
import django.db.models.deletion
from django.db import migrations, models

from core.project_keys import ProjectInPrimaryKey


class Migration(migrations.Migration):

    dependencies = [
        ('provenance', '0015_root_cause_pending'),
        # Its review target's foreign key to provenance_review is dropped first.
        ('metrics', '0010_keys_include_project'),
        ('tenancy', '0003_scopes_roles_invitations_audit'),
    ]

    operations = [
        migrations.AlterField(
            model_name='answercause',
            name='answer',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='causes', to='provenance.finalanswer'),
        ),
        migrations.AlterField(
            model_name='escalation',
            name='closed_by_review',
            field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='closed_escalations', to='provenance.review'),
        ),
        migrations.AlterField(
            model_name='escalation',
            name='trace',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='escalations', to='provenance.trace'),
        ),
        migrations.AlterField(
            model_name='finalanswer',
            name='trace',
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='provenance.trace'),
        ),
        migrations.AlterField(
            model_name='healthfinding',
            name='report',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='findings', to='provenance.healthreport'),
        ),
        migrations.AlterField(
            model_name='review',
            name='trace',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='reviews', to='provenance.trace'),
        ),
        ProjectInPrimaryKey('trace'),
        ProjectInPrimaryKey('node'),
        ProjectInPrimaryKey('fuse'),
        ProjectInPrimaryKey('review'),
        ProjectInPrimaryKey('escalation'),
        ProjectInPrimaryKey('healthreport'),
        ProjectInPrimaryKey('healthfinding'),
        ProjectInPrimaryKey('retentionrun'),
        ProjectInPrimaryKey('finalanswer'),
        ProjectInPrimaryKey('answercause'),
        ProjectInPrimaryKey('rootcausepending'),
        migrations.AddConstraint(
            model_name='answercause',
            constraint=core.project_keys.ProjectForeignKey(field='answer', name='answer_cause_answer_in_project'),
        ),
        migrations.AddConstraint(
            model_name='escalation',
            constraint=core.project_keys.ProjectForeignKey(field='trace', name='escalation_trace_in_project'),
        ),
        migrations.AddConstraint(
            model_name='escalation',
            constraint=core.project_keys.ProjectForeignKey(field='closed_by_review', name='escalation_review_in_project'),
        ),
        migrations.AddConstraint(
            model_name='finalanswer',
            constraint=models.UniqueConstraint(fields=('trace', 'project'), name='final_answer_once_per_trace'),
        ),
        migrations.AddConstraint(
            model_name='finalanswer',
            constraint=core.project_keys.ProjectForeignKey(field='trace', name='final_answer_trace_in_project'),
        ),
        migrations.AddConstraint(
            model_name='healthfinding',
            constraint=core.project_keys.ProjectForeignKey(field='report', name='health_finding_report_in_project'),
        ),
        migrations.AddConstraint(
            model_name='review',
            constraint=core.project_keys.ProjectForeignKey(field='trace', name='review_trace_in_project'),
        ),
    ]
