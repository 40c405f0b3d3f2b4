"""The review target's foreign key on (review_id, project_id), once the
review's own key includes the project (provenance 0016)."""

from django.db import migrations

import core.project_keys


class Migration(migrations.Migration):

    dependencies = [
        ('metrics', '0010_keys_include_project'),
        ('provenance', '0016_keys_include_project'),
    ]

    operations = [
        migrations.AddConstraint(
            model_name='reviewtarget',
            constraint=core.project_keys.ProjectForeignKey(field='review', name='review_target_review_in_project'),
        ),
    ]
