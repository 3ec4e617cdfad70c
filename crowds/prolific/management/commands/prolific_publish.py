"""Publish a batch as a Prolific study, or with --dry-run print what would be created and what it would cost."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from crowds.interface import BackendError
from crowds.management.commands._crowd import get_batch
from crowds.prolific import REJECTION_CATEGORIES
from crowds.prolific.backend import ProlificBackend
from crowds.selectors import batch_publish_plan
from crowds.services import CrowdActionRefused, batch_publish


class Command(BaseCommand):
    help = (
        "Publish a batch as a Prolific study (POST /api/v1/studies/, then the PUBLISH transition): one place per "
        "assignment, one HIT per participant. --dry-run prints the study, its places, the cost with Prolific's service "
        "fee and the pay rate against Prolific's minimum, without any call. Safe to run again: one study per batch; "
        "HITs added since (a growing step-3 batch) add places."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("batch", help="batch id")
        parser.add_argument("--dry-run", action="store_true", help="print the plan and the cost; call nothing")
        parser.add_argument(
            "--estimated-minutes",
            type=int,
            default=None,
            help="the study's estimated completion time of one HIT, in whole minutes (default 1, or the batch's)",
        )
        parser.add_argument(
            "--rejection-category",
            choices=REJECTION_CATEGORIES,
            default=None,
            help="the category rejections carry (default FAILED_CHECK: the controls are attention checks)",
        )
        parser.add_argument(
            "--median-seconds",
            type=float,
            default=None,
            help="time per HIT for the pay rate (default: the estimated time)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["estimated_minutes"] is not None and options["estimated_minutes"] < 1:
            raise CommandError(
                f"--estimated-minutes must be a whole number of minutes >= 1, not {options['estimated_minutes']}"
            )
        if options["median_seconds"] is not None and not options["median_seconds"] > 0:
            raise CommandError(f"--median-seconds must be a number of seconds > 0, not {options['median_seconds']:g}")
        batch = get_batch(options["batch"])
        if batch.backend != ProlificBackend.name:
            raise CommandError(f"{batch} is on the {batch.backend} backend, not prolific")
        if options["estimated_minutes"] is not None and not batch.external.get("study_id"):
            # The plan shows it; only a real publish stores it on the batch.
            batch.external = {**batch.external, "estimated_minutes": options["estimated_minutes"]}
        plan = batch_publish_plan(batch=batch, median_seconds=options["median_seconds"])
        if options["dry_run"]:
            self.stdout.write("Dry run: nothing is sent to Prolific.")
        for line in plan.lines():
            self.stdout.write(line)
        if options["dry_run"]:
            return
        try:
            result = batch_publish(
                batch=batch,
                options={
                    "estimated_minutes": options["estimated_minutes"],
                    "rejection_category": options["rejection_category"],
                },
            )
        except (BackendError, CrowdActionRefused) as error:
            raise CommandError(str(error)) from None
        for message in result.messages:
            self.stdout.write(message)
        self.stdout.write(
            self.style.SUCCESS(
                f"Published {batch}: study {result.hit_type_id}, {result.hits_created} HITs posted, "
                f"{result.hits_existing} already there."
            )
        )
        self.stdout.write("Follow it at https://app.prolific.com/ and here on the batch's crowd page.")
