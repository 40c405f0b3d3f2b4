"""Issue 28, step 2 of 3: each row takes its parent's project, one bulk UPDATE
per table. A correlated subquery rather than UPDATE … FROM, so SQLite (the
embedded mode) runs the same statement as PostgreSQL."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("evals", "0003_project_id_nullable")]

    operations = [
        migrations.RunSQL(
            "UPDATE evals_datasetversion SET project_id = "
            "(SELECT p.project_id FROM evals_dataset p WHERE p.id = evals_datasetversion.dataset_id)",
            migrations.RunSQL.noop,
        ),
        migrations.RunSQL(
            "UPDATE evals_item SET project_id = "
            "(SELECT p.project_id FROM evals_dataset p WHERE p.id = evals_item.dataset_id)",
            migrations.RunSQL.noop,
        ),
        migrations.RunSQL(
            "UPDATE evals_result SET project_id = "
            "(SELECT p.project_id FROM evals_run p WHERE p.id = evals_result.run_id)",
            migrations.RunSQL.noop,
        ),
    ]
