from django.db import migrations, models


class Migration(migrations.Migration):
    """The statistics rollup's unique index carries the figures, so reading a
    month of bins is an index-only scan (issue 23: the Cost & latency page)."""

    dependencies = [
        ('metrics', '0007_day_stats_unpriced_whole_rows'),
    ]

    operations = [
        migrations.RemoveConstraint(model_name='daystat', name='daystat_cell_unique'),
        migrations.AddConstraint(
            model_name='daystat',
            constraint=models.UniqueConstraint(
                fields=('project', 'environment', 'mask', 'metric', 'day', 'agent_id', 'step', 'source_type', 'round',
                        'model', 'bin'),
                include=('n', 'total', 'total_sq', 'total_cube', 'total_quad', 'minimum', 'maximum', 'fractional'),
                name='daystat_cell_unique', nulls_distinct=False),
        ),
    ]
