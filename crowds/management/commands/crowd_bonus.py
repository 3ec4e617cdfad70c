"""Send a bonus, once, to the worker of an assignment through their crowd."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from crowds.interface import BackendError, backend_label
from crowds.interface.costs import bonus_fee
from crowds.management.commands._crowd import get_assignment
from crowds.selectors import batch_fees
from crowds.services import CrowdActionRefused, worker_bonus
from hits.models import BonusStatus


class Command(BaseCommand):
    help = "Pay a bonus, once, to the worker of an assignment: crowd_bonus ASSIGNMENT 0.25 --reason 'Careful work'."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("assignment", help="assignment id, or the crowd's assignment id")
        parser.add_argument("amount", help="dollars, e.g. 0.25")
        parser.add_argument("--reason", required=True, help="shown to the worker; one bonus per assignment and reason")
        parser.add_argument("--above-limit", action="store_true", help="send it even above the benchmark's bonus limit")

    def handle(self, *args: Any, **options: Any) -> None:
        assignment = get_assignment(options["assignment"])
        try:
            bonus = worker_bonus(
                assignment=assignment,
                amount=options["amount"],
                reason=options["reason"],
                above_limit_confirmed=options["above_limit"],
            )
        except (BackendError, CrowdActionRefused) as error:
            raise CommandError(str(error)) from None
        batch = assignment.hit.batch
        if bonus.status == BonusStatus.FAILED:
            raise CommandError(f"bonus {bonus.pk} refused: {bonus.error}")
        if bonus.status == BonusStatus.PENDING:
            self.stdout.write(f"bonus {bonus.pk} is pending (the next sync sends it again): {bonus.error}")
            return
        self.stdout.write(
            self.style.SUCCESS(
                f"bonus {bonus.pk}: ${bonus.amount} (+ ${bonus_fee(bonus.amount, batch_fees(batch=batch))} "
                f"{backend_label(batch.backend)} fee) "
                f"sent to {bonus.worker.external_id}"
            )
        )
