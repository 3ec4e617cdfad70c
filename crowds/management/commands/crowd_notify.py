"""Message every worker who submitted work in a batch, through their crowd."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from crowds.interface import BackendError
from crowds.management.commands._crowd import get_batch
from crowds.services import CrowdActionRefused, batch_notify


class Command(BaseCommand):
    help = "Send a message to every worker who submitted work in a batch."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("batch", help="batch id")
        parser.add_argument("--subject", required=True)
        parser.add_argument("--text", required=True)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = batch_notify(batch=get_batch(options["batch"]), subject=options["subject"], text=options["text"])
        except (BackendError, CrowdActionRefused) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"{result.notified} workers notified")
        for worker_id, reason in sorted(result.failures.items()):
            self.stdout.write(f"  not notified: {worker_id}: {reason}")
