# Worker flags and review settings move here from the analysis app with their tables and rows:
# the state is created as it was there (same tables), then the tables are renamed to this app's.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('analysis', '0004_review_models_move_out'),
        ('annotation', '0003_import_extras'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
        migrations.CreateModel(
            name='ReviewSettings',
            fields=[
                ('benchmark', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='review_settings', serialize=False, to='annotation.benchmark')),
                ('auto_block_spammers', models.BooleanField(default=False, help_text="block workers whose control accuracy falls below the benchmark's threshold")),
                ('auto_block_signals', models.BooleanField(default=False, help_text='block workers flagged by a bot signal (fast, straight-lining, identical answers…)')),
                ('signal_overrides', models.JSONField(blank=True, default=dict)),
                ('signals_computed_on', models.PositiveIntegerField(default=0, editable=False)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('updated_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'verbose_name_plural': 'review settings',
                'db_table': 'analysis_reviewsettings',
            },
        ),
        migrations.CreateModel(
            name='WorkerFlag',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('reason', models.CharField(choices=[('control_accuracy', 'control accuracy below the threshold'), ('fast', 'implausibly fast'), ('straight_line', 'the same answer on every row'), ('abstain', 'abstains far more than the crowd'), ('identical', "answers identical to another worker's"), ('disagreement', 'low agreement with the majority')], max_length=20)),
                ('evidence', models.JSONField(blank=True, default=dict)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('cleared_at', models.DateTimeField(blank=True, null=True)),
                ('benchmark', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='worker_flags', to='annotation.benchmark')),
                ('cleared_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('worker', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='flags', to='annotation.worker')),
            ],
            options={
                'ordering': ['-created_at'],
                'db_table': 'analysis_workerflag',
                'constraints': [models.UniqueConstraint(fields=('benchmark', 'worker', 'reason'), name='workerflag_unique_reason')],
            },
        ),
        ]),
        migrations.AlterModelTable(name='reviewsettings', table=None),
        migrations.AlterModelTable(name='workerflag', table=None),
    ]
