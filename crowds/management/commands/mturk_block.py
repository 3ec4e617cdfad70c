"""Block an MTurk worker here and on MTurk (create_worker_block)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from crowds.interface import BackendError
from crowds.management.commands._crowd import get_mturk_worker
from crowds.services import CrowdActionRefused, worker_block_remote


class Command(BaseCommand):
    help = (
        "Block an MTurk worker (by WorkerId) here and on MTurk, with a reason for your records "
        "(MTurk does not show it to the worker)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("worker", help="MTurk WorkerId")
        parser.add_argument("--reason", required=True)

    def handle(self, *args: Any, **options: Any) -> None:
        worker = get_mturk_worker(options["worker"])
        try:
            worker_block_remote(worker=worker, reason=options["reason"])
        except (BackendError, CrowdActionRefused) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(self.style.SUCCESS(f"{worker.external_id} is blocked"))
