# SWORDS's collection settings move from Benchmark columns into the scheme's typed settings
# (Benchmark.scheme_settings, read by schemes.swords.settings.SwordsSettings). Every existing
# benchmark keeps its values: they are copied into the JSON before the columns go.

from django.db import migrations, models

MOVED = ("candidates_per_hit", "step2_labels", "step3_labels", "pass_min_accepts", "min_control_accuracy")


def columns_to_settings(apps, schema_editor):
    Benchmark = apps.get_model("annotation", "Benchmark")
    for benchmark in Benchmark.objects.all():
        benchmark.scheme_settings = {name: getattr(benchmark, name) for name in MOVED}
        benchmark.save(update_fields=["scheme_settings"])


def settings_to_columns(apps, schema_editor):
    Benchmark = apps.get_model("annotation", "Benchmark")
    for benchmark in Benchmark.objects.all():
        for name in MOVED:
            if name in benchmark.scheme_settings:
                setattr(benchmark, name, benchmark.scheme_settings[name])
        benchmark.save(update_fields=list(MOVED))


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0004_import_records'),
    ]

    operations = [
        migrations.AddField(
            model_name='benchmark',
            name='scheme_settings',
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RunPython(columns_to_settings, settings_to_columns),
        migrations.RemoveConstraint(
            model_name='benchmark',
            name='benchmark_candidates_per_hit_1_to_10',
        ),
        migrations.RemoveConstraint(
            model_name='benchmark',
            name='benchmark_min_control_accuracy_is_a_share',
        ),
        migrations.RemoveConstraint(
            model_name='benchmark',
            name='benchmark_step2_labels_positive',
        ),
        migrations.RemoveConstraint(
            model_name='benchmark',
            name='benchmark_pass_min_accepts_positive',
        ),
        migrations.RemoveField(
            model_name='benchmark',
            name='candidates_per_hit',
        ),
        migrations.RemoveField(
            model_name='benchmark',
            name='min_control_accuracy',
        ),
        migrations.RemoveField(
            model_name='benchmark',
            name='pass_min_accepts',
        ),
        migrations.RemoveField(
            model_name='benchmark',
            name='step2_labels',
        ),
        migrations.RemoveField(
            model_name='benchmark',
            name='step3_labels',
        ),
    ]
