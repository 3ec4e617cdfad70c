"""Publish a batch to MTurk, or with --dry-run print what would be published and what it would cost."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from crowdlex.progress import progress_bar
from crowds.interface import BackendError
from crowds.management.commands._crowd import get_batch
from crowds.mturk import REQUESTER_SITES, WORKER_SITES, Qualifications
from crowds.mturk.backend import MTurkBackend
from crowds.selectors import batch_publish_plan
from crowds.services import CrowdActionRefused, batch_publish


class Command(BaseCommand):
    help = (
        "Publish a batch's HITs to MTurk (create_hit_type, then create_hit_with_hit_type per HIT). "
        "--dry-run prints the HIT type, HITs, qualifications, the first ExternalQuestion URL and the cost, "
        "without any AWS call or credentials. Safe to run again: published HITs are never duplicated."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("batch", help="batch id")
        parser.add_argument("--dry-run", action="store_true", help="print the plan and the cost; call nothing")
        where = parser.add_mutually_exclusive_group()
        where.add_argument("--sandbox", dest="sandbox", action="store_true", default=None, help="MTurk sandbox")
        where.add_argument("--production", dest="sandbox", action="store_false", help="MTurk production (real money)")
        parser.add_argument(
            "--qualifications",
            default=None,
            help="change qualifications before publishing, e.g. 'approved_hits=off' or 'approval_rate=95,locale=GB'",
        )
        parser.add_argument(
            "--median-seconds",
            type=float,
            default=None,
            help="time per assignment for the wage estimate (default: measured on submitted work)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["median_seconds"] is not None and not options["median_seconds"] > 0:
            raise CommandError(f"--median-seconds must be a number of seconds > 0, not {options['median_seconds']:g}")
        batch = get_batch(options["batch"])
        if batch.backend != MTurkBackend.name:
            raise CommandError(f"{batch} is on the {batch.backend} backend, not mturk")
        sandbox = options["sandbox"]
        qualifications = None
        if options["qualifications"] is not None:
            try:
                qualifications = Qualifications.parse_overrides(options["qualifications"], batch.qualifications)
            except ValueError as error:
                raise CommandError(str(error)) from None
            # The plan shows them; only a real publish stores them on the batch.
            batch.qualifications = qualifications
        plan = batch_publish_plan(batch=batch, sandbox=sandbox, median_seconds=options["median_seconds"])
        if options["dry_run"]:
            self.stdout.write("Dry run: nothing is sent to MTurk.")
        for line in plan.lines():
            self.stdout.write(line)
        if options["dry_run"]:
            return
        try:
            with progress_bar(self.stderr, desc="publishing", unit="HIT") as progress:
                result = batch_publish(
                    batch=batch, progress=progress, options={"sandbox": sandbox, "qualifications": qualifications}
                )
        except (BackendError, CrowdActionRefused) as error:
            raise CommandError(str(error)) from None
        for message in result.messages:
            self.stdout.write(message)
        batch.refresh_from_db()
        environment = batch.external.get("environment", "sandbox" if settings.MTURK_SANDBOX else "production")
        self.stdout.write(
            self.style.SUCCESS(
                f"Published {batch}: {result.hits_created} HITs created, {result.hits_existing} already there "
                f"(HIT type {result.hit_type_id}, {environment})."
            )
        )
        group = batch.external.get("hit_group_id")
        if group:
            self.stdout.write(f"Workers find it at {WORKER_SITES[environment]}/projects/{group}/tasks")
        self.stdout.write(f"Requester site: {REQUESTER_SITES[environment]}/manage")
