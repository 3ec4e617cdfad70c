import annotation.models
from django.db import migrations, models


class Migration(migrations.Migration):
    """The kinds of a crowd's workers are offered by the crowds' registry: the choices live in Python
    only, so the table is left as it is."""

    dependencies = [
        ("annotation", "0028_refresh_touched_targets"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="worker",
                    name="kind",
                    field=models.CharField(choices=annotation.models.worker_kind_choices, max_length=10),
                ),
            ],
            database_operations=[],
        ),
    ]
