from django.db import migrations, models


class Migration(migrations.Migration):
    """The crowd-side qualification types keep their column; only the field's name in the code changes."""

    dependencies = [
        ("hits", "0021_batch_backend_from_the_crowds_registry"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RenameField(model_name="qualificationtest", old_name="mturk_types", new_name="crowd_types"),
                migrations.AlterField(
                    model_name="qualificationtest",
                    name="crowd_types",
                    field=models.JSONField(blank=True, db_column="mturk_types", default=dict),
                ),
            ],
            database_operations=[],
        ),
    ]
