from django.db import migrations


def start_over(apps, schema_editor):
    """The statistics rollup keeps a new value, "@unpriced" (the tokens of
    nodes without a cost, by model, for the Cost & latency page): forget how
    far the rollups had read, so the next refresh rebuilds them all with it."""
    for name in ("Watermark", "RolledProject", "HourRollup", "TraceSpan", "DayHistogram", "DayStat", "HourFuseReason",
                 "ReviewTarget", "HourEscalation", "PolicyHour", "PolicyItemHour"):
        apps.get_model("metrics", name).objects.all().delete()


class Migration(migrations.Migration):

    dependencies = [
        ('metrics', '0006_day_stats_grid'),
    ]

    operations = [
        migrations.RunPython(start_over, migrations.RunPython.noop),
    ]
