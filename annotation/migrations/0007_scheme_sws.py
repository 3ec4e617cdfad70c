# The Smart Word Suggestions scheme is named "sws", as its package (schemes.sws) and its format are.
# Numbered after main's 0006_language_and_excluded_candidates; on merging, depend on it instead of 0005.
# No benchmark could use the old value (no scheme was registered under it); any that did follows.

from django.db import migrations, models


def rename(old, new):
    def run(apps, schema_editor):
        apps.get_model("annotation", "Benchmark").objects.filter(scheme=old).update(scheme=new)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0006_language_and_excluded_candidates"),
    ]

    operations = [
        migrations.AlterField(
            model_name="benchmark",
            name="scheme",
            field=models.CharField(
                choices=[
                    ("swords", "SWORDS (accept / reject / abstain, crowd)"),
                    ("prolex", "ProLex (1 / -1 / 0, experts)"),
                    ("sws", "Smart Word Suggestions (spans and suggestions)"),
                ],
                default="swords",
                max_length=16,
            ),
        ),
        migrations.RunPython(rename("suggest", "sws"), rename("sws", "suggest")),
    ]
