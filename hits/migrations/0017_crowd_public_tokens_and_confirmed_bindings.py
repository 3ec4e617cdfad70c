"""Public tokens for crowd URLs, and crowd bindings that count only once the crowd confirms them.

``HIT.public_token`` and ``Batch.public_token`` replace database ids in the URLs MTurk and Prolific
open; existing rows get a random token each. The one-worker-per-HIT and one-row-per-assignment-id
constraints apply to confirmed assignments only (docs/design.md §4), with plain indexes for lookups.
"""

import secrets

from django.db import migrations, models
from django.db.models import Q

import hits.models


def _fill_tokens(apps, schema_editor):  # type: ignore[no-untyped-def]
    for name in ("HIT", "Batch"):
        model = apps.get_model("hits", name)
        rows = list(model.objects.filter(public_token__isnull=True).only("pk"))
        for row in rows:
            row.public_token = secrets.token_urlsafe(16)
        model.objects.bulk_update(rows, ["public_token"], batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [
        ("hits", "0016_hititem_text_any_length"),
    ]

    operations = [
        migrations.AddField(
            model_name="batch",
            name="public_token",
            field=models.CharField(max_length=32, null=True, editable=False),
        ),
        migrations.AddField(
            model_name="hit",
            name="public_token",
            field=models.CharField(max_length=32, null=True, editable=False),
        ),
        migrations.RunPython(_fill_tokens, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="batch",
            name="public_token",
            field=models.CharField(default=hits.models.new_public_token, editable=False, max_length=32, unique=True),
        ),
        migrations.AlterField(
            model_name="hit",
            name="public_token",
            field=models.CharField(default=hits.models.new_public_token, editable=False, max_length=32, unique=True),
        ),
        migrations.RemoveConstraint(model_name="assignment", name="assignment_once_per_worker_per_hit"),
        migrations.RemoveConstraint(model_name="assignment", name="assignment_unique_external_id"),
        migrations.AddIndex(
            model_name="assignment",
            index=models.Index(fields=["hit", "worker"], name="assignment_hit_worker"),
        ),
        migrations.AddIndex(
            model_name="assignment",
            index=models.Index(fields=["external_id"], name="assignment_external_id"),
        ),
        migrations.AddConstraint(
            model_name="assignment",
            constraint=models.UniqueConstraint(
                fields=["hit", "worker"],
                condition=Q(external_id="") | ~Q(external_status=""),
                name="assignment_once_per_worker_per_hit",
            ),
        ),
        migrations.AddConstraint(
            model_name="assignment",
            constraint=models.UniqueConstraint(
                fields=["external_id"],
                condition=~Q(external_id="") & ~Q(external_status=""),
                name="assignment_unique_external_id",
            ),
        ),
    ]
