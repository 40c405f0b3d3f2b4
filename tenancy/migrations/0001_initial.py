import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

MOVED = ('project', 'apikey')


def move_content_types(from_label, to_label):
    # An existing database keeps its content types (and so the permissions and
    # admin history that point at them) by relabelling them; a fresh one has none yet.
    def move(apps, schema_editor):
        ContentType = apps.get_model('contenttypes', 'ContentType')
        db = schema_editor.connection.alias
        if not ContentType.objects.using(db).filter(app_label=to_label, model__in=MOVED).exists():
            ContentType.objects.using(db).filter(app_label=from_label, model__in=MOVED).update(app_label=to_label)
    return move


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ('contenttypes', '0002_remove_content_type_name'),
        # The tables were created by provenance's migrations up to here.
        ('provenance', '0011_root_causes'),
    ]

    # Project and ApiKey move here from provenance without touching the database:
    # their tables keep their names (Meta.db_table), so this only tells Django's
    # state where the models now live.
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Project',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('slug', models.SlugField(max_length=64, unique=True)),
                        ('name', models.CharField(blank=True, max_length=200)),
                        ('high_uncertainty_threshold', models.FloatField(default=0.5, help_text='Nodes with a confidence below this are high-uncertainty.')),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('trace_days', models.PositiveIntegerField(blank=True, help_text='Traces whose last activity is older than this many days are deleted.', null=True)),
                        ('full_content_days', models.PositiveIntegerField(blank=True, help_text='After this many days, only nodes that matter keep their full text.', null=True)),
                        ('keep_full_below', models.FloatField(default=0.8, help_text='Past full_content_days, nodes with a confidence below this keep their full text.')),
                        ('members', models.ManyToManyField(blank=True, related_name='projects', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'provenance_project',
                        'ordering': ['slug'],
                    },
                ),
                migrations.CreateModel(
                    name='ApiKey',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(default='default', max_length=100)),
                        ('prefix', models.CharField(help_text='The first characters, to tell keys apart.', max_length=16)),
                        ('key_hash', models.CharField(max_length=64, unique=True)),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('revoked_at', models.DateTimeField(blank=True, null=True)),
                        ('last_used_at', models.DateTimeField(blank=True, null=True)),
                        ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='api_keys', to='tenancy.project')),
                    ],
                    options={
                        'db_table': 'provenance_apikey',
                        'ordering': ['-created_at'],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(move_content_types('provenance', 'tenancy'), move_content_types('tenancy', 'provenance')),
    ]
