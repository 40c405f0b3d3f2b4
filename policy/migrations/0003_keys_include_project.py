"""Keys that carry the project (issue 28; core/project_keys.py): the primary
key becomes (id, project_id). PostgreSQL only; nothing refers to this table."""

from django.db import migrations

from core.project_keys import ProjectInPrimaryKey


class Migration(migrations.Migration):

    dependencies = [
        ('policy', '0002_project_in_tenancy'),
    ]

    operations = [
        ProjectInPrimaryKey('policyversion'),
    ]
