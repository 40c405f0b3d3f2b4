"""The day statistics covering index (issue 23) and the hour traces (issue 22) were built side by side."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('metrics', '0008_day_stats_covering'),
        ('metrics', '0008_hour_trace'),
    ]

    operations = [
    ]
