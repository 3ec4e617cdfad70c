"""Publish a batch to its crowd with the crowd's own options, or with --dry-run print what would be sent."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from crowds.interface import BackendError, get_backend
from crowds.management.commands._crowd import get_batch
from crowds.selectors import batch_publish_plan
from crowds.services import CrowdActionRefused, batch_publish


def _option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE``: the value read as JSON (a number, true, null, an object...), else as text."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise CommandError(f"--option takes KEY=VALUE, not {text!r}")
    try:
        return key.strip(), json.loads(value)
    except ValueError:
        return key.strip(), value


class Command(BaseCommand):
    help = (
        "Publish a batch to its crowd (the crowd's own options as --option KEY=VALUE, checked by its backend; "
        "docs/architecture.md). --dry-run prints the plan and the cost and calls nothing. Safe to run again: "
        "nothing is published twice."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("batch", help="batch id")
        parser.add_argument("--option", action="append", default=[], help="one of the crowd's publish options")
        parser.add_argument("--dry-run", action="store_true", help="print the plan and the cost; call nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        batch = get_batch(options["batch"])
        chosen = dict(_option(text) for text in options["option"])
        sandbox = chosen.get("sandbox")
        plan = batch_publish_plan(batch=batch, sandbox=None if sandbox is None else bool(sandbox))
        backend = get_backend(batch.backend)
        if options["dry_run"]:
            self.stdout.write(f"Dry run: nothing is sent to {backend.publish_where(batch=batch, options=chosen)}.")
        for line in plan.lines():
            self.stdout.write(line)
        if options["dry_run"]:
            return
        try:
            result = batch_publish(batch=batch, options=chosen)
        except (BackendError, CrowdActionRefused) as error:
            raise CommandError(str(error)) from None
        for message in result.messages:
            self.stdout.write(message)
        self.stdout.write(
            self.style.SUCCESS(
                f"Published {batch} on {backend.publish_where(batch=batch, options=chosen)}: "
                f"{backend.posting_name} {result.hit_type_id}, {result.hits_created} HITs posted, "
                f"{result.hits_existing} already there."
            )
        )
