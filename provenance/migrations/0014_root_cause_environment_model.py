from django.db import migrations, models

# Rows stored before these columns existed get their trace's environment and
# their answer node's model (the refresh writes both from now on).
FILL = [
    """UPDATE provenance_finalanswer SET
           environment = (SELECT t.environment FROM provenance_trace t WHERE t.id = provenance_finalanswer.trace_id),
           model = COALESCE((SELECT n.model FROM provenance_node n WHERE n.id = provenance_finalanswer.node_pk), '')""",
    """UPDATE provenance_answercause SET
           environment = (SELECT a.environment FROM provenance_finalanswer a WHERE a.id = provenance_answercause.answer_id),
           answer_model = (SELECT a.model FROM provenance_finalanswer a WHERE a.id = provenance_answercause.answer_id)""",
]


class Migration(migrations.Migration):

    dependencies = [
        ('provenance', '0013_cost_latency_environment'),
    ]

    operations = [
        migrations.AddField(
            model_name='finalanswer',
            name='environment',
            field=models.CharField(default='production', help_text="Its trace's environment.", max_length=50),
        ),
        migrations.AddField(
            model_name='finalanswer',
            name='model',
            field=models.CharField(blank=True, default='', help_text="The answer node's model.", max_length=255),
        ),
        migrations.AddField(
            model_name='answercause',
            name='environment',
            field=models.CharField(default='production', max_length=50),
        ),
        migrations.AddField(
            model_name='answercause',
            name='answer_model',
            field=models.CharField(blank=True, default='', max_length=255),
        ),
        migrations.RunSQL(FILL, migrations.RunSQL.noop),
    ]
