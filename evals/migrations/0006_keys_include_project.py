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
        ('evals', '0005_project_id_not_null'),
        ('tenancy', '0003_scopes_roles_invitations_audit'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='datasetversion',
            name='dataset_version_unique',
        ),
        migrations.RemoveConstraint(
            model_name='result',
            name='eval_result_unique_per_item',
        ),
        migrations.AlterField(
            model_name='datasetversion',
            name='dataset',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='versions', to='evals.dataset'),
        ),
        migrations.AlterField(
            model_name='item',
            name='dataset',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='evals.dataset'),
        ),
        migrations.AlterField(
            model_name='result',
            name='run',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='results', to='evals.run'),
        ),
        migrations.AlterField(
            model_name='run',
            name='dataset',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='runs', to='evals.dataset'),
        ),
        ProjectInPrimaryKey('dataset'),
        ProjectInPrimaryKey('datasetversion'),
        ProjectInPrimaryKey('item'),
        ProjectInPrimaryKey('run'),
        ProjectInPrimaryKey('result'),
        migrations.AddConstraint(
            model_name='datasetversion',
            constraint=models.UniqueConstraint(fields=('dataset', 'number', 'project'), name='dataset_version_unique'),
        ),
        migrations.AddConstraint(
            model_name='datasetversion',
            constraint=core.project_keys.ProjectForeignKey(field='dataset', name='dataset_version_dataset_in_project'),
        ),
        migrations.AddConstraint(
            model_name='item',
            constraint=core.project_keys.ProjectForeignKey(field='dataset', name='eval_item_dataset_in_project'),
        ),
        migrations.AddConstraint(
            model_name='result',
            constraint=models.UniqueConstraint(fields=('run', 'item_id', 'project'), name='eval_result_unique_per_item'),
        ),
        migrations.AddConstraint(
            model_name='result',
            constraint=core.project_keys.ProjectForeignKey(field='run', name='eval_result_run_in_project'),
        ),
        migrations.AddConstraint(
            model_name='run',
            constraint=core.project_keys.ProjectForeignKey(field='dataset', name='eval_run_dataset_in_project'),
        ),
    ]
