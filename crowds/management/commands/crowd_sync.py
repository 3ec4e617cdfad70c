"""Sync crowd batches: reconcile assignments, approve or reject by policy, bonuses, blocks, re-collection."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from crowdlex.progress import Progress, progress_bar
from crowds.interface import BackendError, remote_backend_names
from crowds.management.commands._crowd import get_batch
from crowds.services import CrowdActionRefused, batch_sync, batches_sync_open
from crowds.services.sync import SyncReport


class Command(BaseCommand):
    help = (
        "Sync the given batches (default: every published crowd batch that is open or has work awaiting a "
        "decision, of --crowd only when given): list assignments on the crowd, flag unknown ones, approve valid "
        "work, approve or reject filtered work by the batch's policy, resend pending bonuses, block blocked "
        "workers, re-collect filtered HITs."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("batches", nargs="*", help="batch ids")
        parser.add_argument(
            "--no-review", action="store_true", help="reconcile only: approve, reject, pay or re-collect nothing"
        )
        parser.add_argument(
            "--hold",
            type=int,
            default=None,
            help="decide only on work submitted at least this many seconds ago "
            "(default: the crowd's own hold, e.g. MTURK_APPROVAL_HOLD_SECONDS; 0 decides everything now)",
        )
        parser.add_argument(
            "--crowd", choices=remote_backend_names(), default=None, help="sync only this crowd's open batches"
        )

    nothing_to_sync = "No published crowd batch to sync."
    # The crowd whose open batches a sync with no batch named takes; None: every crowd's, as the beat task.
    crowd: str | None = None

    def open_batches(
        self,
        progress: Progress | None = None,
        crowd: str | None = None,
        *,
        review: bool = True,
        hold: timedelta | None = None,
    ) -> list[SyncReport]:
        return batches_sync_open(backend=crowd or self.crowd, progress=progress, review=review, hold=hold)

    def handle(self, *args: Any, **options: Any) -> None:
        hold = None if options["hold"] is None else timedelta(seconds=options["hold"])
        try:
            with progress_bar(self.stderr, desc="syncing", unit="batch") as progress:
                if options["batches"]:
                    reports = []
                    for value in options["batches"]:
                        reports.append(batch_sync(batch=get_batch(value), review=not options["no_review"], hold=hold))
                        if progress is not None:
                            progress(len(reports), len(options["batches"]))
                else:
                    reports = self.open_batches(
                        progress, options.get("crowd"), review=not options["no_review"], hold=hold
                    )
        except (BackendError, CrowdActionRefused) as error:
            raise CommandError(str(error)) from None
        if not reports:
            self.stdout.write(self.nothing_to_sync)
        for report in reports:
            self.stdout.write(report.summary())
