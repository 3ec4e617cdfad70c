"""Take a batch's HITs down on its crowd now and close the batch."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from crowds.interface import BackendError
from crowds.management.commands._crowd import get_batch
from crowds.services import CrowdActionRefused, batch_expire


class Command(BaseCommand):
    help = (
        "Take every posting of a batch down on its crowd now (accepted work may still be submitted) and close the "
        "batch."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("batch", help="batch id")

    def handle(self, *args: Any, **options: Any) -> None:
        batch = get_batch(options["batch"])
        try:
            expired = batch_expire(batch=batch)
        except (BackendError, CrowdActionRefused) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(self.style.SUCCESS(f"{batch}: {expired} HITs expired; the batch is closed."))
