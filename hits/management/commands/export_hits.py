"""python manage.py export_hits BATCH --output PATH: the batch as an MTurk-style input CSV."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from hits.exports import hits_csv_write
from hits.models import Batch


class Command(BaseCommand):
    help = "Write a batch's HITs as CSV: one row per HIT with target, context and each item's text, candidate id, kind."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("batch", type=int, help="batch id")
        parser.add_argument("--output", required=True, help="file to write, or - for standard output")

    def handle(self, *args: Any, **options: Any) -> None:
        batch = Batch.objects.filter(pk=options["batch"]).first()
        if batch is None:
            raise CommandError(f"no batch with id {options['batch']}")
        path = options["output"]
        if path == "-":
            hits_csv_write(batch=batch, out=self.stdout)
            return
        try:
            with open(path, "w", encoding="utf-8", newline="") as out:
                written = hits_csv_write(batch=batch, out=out)
        except OSError as error:
            raise CommandError(f"cannot write {path}: {error.strerror}") from error
        self.stdout.write(f"wrote {written} HITs of batch {batch.pk} to {path}")
