from django.db import migrations, models


def start_over(apps, schema_editor):
    """The statistics rollup keeps a new value, "@unpriced" (nodes with usage
    and no cost, by model, for the Cost & latency page), and each group's bins
    added up in a row of its own: forget how far the rollups had read, so the
    next refresh rebuilds them all with both."""
    for name in ("Watermark", "RolledProject", "HourRollup", "TraceSpan", "DayHistogram", "DayStat", "HourFuseReason",
                 "ReviewTarget", "HourEscalation", "PolicyHour", "PolicyItemHour"):
        apps.get_model("metrics", name).objects.all().delete()


class Migration(migrations.Migration):

    dependencies = [
        ('metrics', '0006_day_stats_grid'),
    ]

    operations = [
        migrations.RunPython(start_over, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name='daystat',
            index=models.Index(condition=models.Q(('bin', -4611686018427387904)),
                               fields=['project', 'environment', 'mask', 'metric', 'day'], name='daystat_whole_rows'),
        ),
    ]
