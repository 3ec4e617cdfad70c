from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotation", "0019_activity_undo_and_people")]

    operations = [
        migrations.AddField(model_name="import", name="provenance", field=models.JSONField(blank=True, default=dict)),
    ]
