"""An index on the hour traces' (project, hour): the rollup refresh deletes
the rows of the hours it recomputes, every mask and agent, which the index on
(project, mask, agent, hour) cannot find without reading all of a project's rows."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('metrics', '0011_review_target_review_in_project'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='hourtrace',
            index=models.Index(fields=['project', 'hour'], name='hourtrace_project_hour'),
        ),
    ]
