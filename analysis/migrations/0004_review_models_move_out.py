# Worker flags and review settings belong to the review app now; their tables move with them
# (review.0001_initial). Only the migration state changes here: the rows stay where they are.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('analysis', '0003_review_settings'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name='WorkerFlag'),
                migrations.DeleteModel(name='ReviewSettings'),
            ],
        ),
    ]
