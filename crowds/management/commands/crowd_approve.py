"""Approve (or with --reject, reject) submitted assignments, by id here or by the crowd's own id."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from crowds.interface import BackendError
from crowds.management.commands._crowd import get_assignment
from crowds.services import CrowdActionRefused, assignment_approve, assignment_reject


class Command(BaseCommand):
    help = (
        "Approve submitted assignments (their crowd pays them), or reject them with --reject. Only work the crowd "
        "has confirmed in a sync is approved; work the crowd does not know is never paid."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("assignments", nargs="+", help="assignment ids, or the crowd's assignment ids")
        parser.add_argument("--reject", action="store_true", help="reject instead of approving")
        parser.add_argument("--message", default="", help="feedback to the worker (rejection default: the batch's)")

    def handle(self, *args: Any, **options: Any) -> None:
        failed = 0
        for value in options["assignments"]:
            assignment = get_assignment(value)
            try:
                if options["reject"]:
                    assignment = assignment_reject(assignment=assignment, message=options["message"])
                else:
                    assignment = assignment_approve(assignment=assignment, message=options["message"])
            except (BackendError, CrowdActionRefused) as error:
                failed += 1
                self.stderr.write(self.style.ERROR(f"assignment {assignment.pk}: {error}"))
                continue
            self.stdout.write(f"assignment {assignment.pk} ({assignment.external_id}): {assignment.status}")
        if failed:
            raise CommandError(f"{failed} of {len(options['assignments'])} assignments could not be changed")
