from django.db import migrations


def start_over(apps, schema_editor):
    """The statistics rollup's grid changed (2% and 0.002 steps, no rows by
    every dimension at once): forget how far the rollups had read, so the next
    refresh rebuilds them all on the new grid."""
    for name in ("Watermark", "RolledProject", "HourRollup", "TraceSpan", "DayHistogram", "DayStat", "HourFuseReason",
                 "ReviewTarget", "HourEscalation", "PolicyHour", "PolicyItemHour"):
        apps.get_model("metrics", name).objects.all().delete()


class Migration(migrations.Migration):

    dependencies = [
        ('metrics', '0005_project_in_tenancy'),
    ]

    operations = [
        migrations.RunPython(start_over, migrations.RunPython.noop),
    ]
