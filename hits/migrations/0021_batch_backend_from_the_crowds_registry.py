import crowds.interface
from django.db import migrations, models


class Migration(migrations.Migration):
    """A batch's crowds come from the registry (``settings.CROWD_BACKENDS``): its choices and default
    live in Python only, so the table is left as it is."""

    dependencies = [
        ("hits", "0020_worker_drafts_and_gold_feedback"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="batch",
                    name="backend",
                    field=models.CharField(
                        choices=crowds.interface.backend_choices,
                        default=crowds.interface.default_backend_name,
                        max_length=10,
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
