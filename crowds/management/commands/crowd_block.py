"""Block a crowd's worker here and on their crowd, where it has a block of its own."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from crowds.interface import BackendError
from crowds.management.commands._crowd import get_crowd_worker
from crowds.services import CrowdActionRefused, worker_block_remote


class Command(BaseCommand):
    help = (
        "Block a crowd's worker (by the crowd's worker id) here and, where the crowd has a block of its own, on "
        "the crowd, with a reason for your records (not shown to the worker)."
    )
    # The crowd whose workers this command names; None: the one worker with that id, whichever crowd sent them.
    crowd: str | None = None

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("worker", help="the crowd's worker id")
        parser.add_argument("--reason", required=True)

    def handle(self, *args: Any, **options: Any) -> None:
        worker = get_crowd_worker(options["worker"], crowd=self.crowd)
        try:
            worker_block_remote(worker=worker, reason=options["reason"])
        except (BackendError, CrowdActionRefused) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(self.style.SUCCESS(f"{worker.external_id} is blocked"))
