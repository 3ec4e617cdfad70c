import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0011_refresh_requests"),
        ("review", "0002_telemetry_signal_reasons"),
    ]

    operations = [
        migrations.RemoveField(model_name="reviewsettings", name="signals_computed_on"),
        migrations.CreateModel(
            name="SignalsState",
            fields=[
                (
                    "benchmark",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="signals_state",
                        serialize=False,
                        to="annotation.benchmark",
                    ),
                ),
                ("requests", models.PositiveBigIntegerField(default=0)),
                ("computed_requests", models.PositiveBigIntegerField(default=0)),
                ("queued_at", models.DateTimeField(blank=True, null=True)),
                ("due_at", models.DateTimeField(blank=True, null=True)),
                ("computed_at", models.DateTimeField(blank=True, null=True)),
                ("seconds", models.FloatField(default=0.0)),
                ("assignments", models.PositiveIntegerField(default=0)),
            ],
        ),
    ]
