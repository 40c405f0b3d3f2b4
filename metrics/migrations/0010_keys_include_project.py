"""Keys that carry the project (issue 28; core/project_keys.py): single-column
foreign keys between project tables are dropped, every primary key becomes
(id, project_id), then the foreign keys come back on (column, project_id).
PostgreSQL only; on SQLite the primary-key steps do nothing."""

import django.db.models.deletion
from django.db import migrations, models

from core.project_keys import ProjectInPrimaryKey


class Migration(migrations.Migration):

    dependencies = [
        ('metrics', '0009_merge_covering_hour_trace'),
        ('provenance', '0015_root_cause_pending'),
        ('tenancy', '0003_scopes_roles_invitations_audit'),
    ]

    operations = [
        migrations.AlterField(
            model_name='reviewtarget',
            name='review',
            field=models.OneToOneField(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='+', serialize=False, to='provenance.review'),
        ),
        ProjectInPrimaryKey('hourrollup'),
        ProjectInPrimaryKey('tracespan'),
        ProjectInPrimaryKey('hourtrace'),
        ProjectInPrimaryKey('dayhistogram'),
        ProjectInPrimaryKey('daystat'),
        ProjectInPrimaryKey('hourfusereason'),
        ProjectInPrimaryKey('reviewtarget'),
        ProjectInPrimaryKey('hourescalation'),
        ProjectInPrimaryKey('policyhour'),
        ProjectInPrimaryKey('policyitemhour'),
        ProjectInPrimaryKey('rolledproject'),
    ]
