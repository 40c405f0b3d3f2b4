import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

import tenancy.models


class Migration(migrations.Migration):

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ('tenancy', '0002_project_prices'),
    ]

    operations = [
        # Existing keys keep working as they did: with every scope.
        migrations.AddField(
            model_name='apikey',
            name='scopes',
            field=models.JSONField(default=tenancy.models.all_scopes, help_text='Any of "ingest", "read", "admin".'),
        ),
        migrations.AddField(
            model_name='apikey',
            name='expires_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        # The plain many-to-many's own table becomes the Membership model's, so
        # every existing member stays one; only the role column is new.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Membership',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to='tenancy.project')),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'provenance_project_members',
                    },
                ),
                migrations.AlterField(
                    model_name='project',
                    name='members',
                    field=models.ManyToManyField(blank=True, related_name='projects', through='tenancy.Membership', to=settings.AUTH_USER_MODEL),
                ),
                migrations.AddConstraint(
                    model_name='membership',
                    constraint=models.UniqueConstraint(fields=('project', 'user'), name='membership_once_per_project'),
                ),
            ],
            database_operations=[],
        ),
        # Members before roles could change rules and review: they become editors.
        migrations.AddField(
            model_name='membership',
            name='role',
            field=models.CharField(choices=[('viewer', 'viewer'), ('editor', 'editor'), ('admin', 'admin')], default='editor', max_length=16),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name='membership',
            name='role',
            field=models.CharField(choices=[('viewer', 'viewer'), ('editor', 'editor'), ('admin', 'admin')], default='viewer', max_length=16),
        ),
        migrations.CreateModel(
            name='Invitation',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('role', models.CharField(choices=[('viewer', 'viewer'), ('editor', 'editor'), ('admin', 'admin')], default='viewer', max_length=16)),
                ('email', models.EmailField(blank=True, max_length=254)),
                ('token_hash', models.CharField(max_length=64, unique=True)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('expires_at', models.DateTimeField()),
                ('used_at', models.DateTimeField(blank=True, null=True)),
                ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='invitations', to='tenancy.project')),
                ('used_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-created_at'],
            },
        ),
        migrations.CreateModel(
            name='AuditEntry',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('at', models.DateTimeField(default=django.utils.timezone.now)),
                ('actor', models.CharField(help_text='The person (user:NAME) or key (key:PREFIX NAME).', max_length=200)),
                ('action', models.CharField(help_text='What happened, e.g. "alert_rule.update".', max_length=64)),
                ('object_type', models.CharField(max_length=64)),
                ('object_id', models.CharField(blank=True, max_length=64)),
                ('object', models.CharField(help_text='What it happened to, in words.', max_length=300)),
                ('detail', models.JSONField(blank=True, default=dict)),
                ('actor_key', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='tenancy.apikey')),
                ('actor_user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='audit_entries', to='tenancy.project')),
            ],
            options={
                'ordering': ['-at', '-id'],
                'indexes': [models.Index(fields=['project', '-at', '-id'], name='audit_newest_first')],
            },
        ),
    ]
