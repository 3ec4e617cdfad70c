"""python manage.py import_delete BENCHMARK ORIGIN [--dry-run] [--json]"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Benchmark, Import
from annotation.services import ImportRemovalRefused, import_delete


class Command(BaseCommand):
    help = (
        "Remove an import by its origin, in one transaction: its labels, and the candidates, targets and contexts "
        "no other import brought. Refused while batches have HITs on its targets."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark name")
        parser.add_argument(
            "origin", help="the import's origin (the benchmark page lists them), or the path it was imported from"
        )
        parser.add_argument("--dry-run", action="store_true", help="report what would be removed, remove nothing")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = Benchmark.objects.filter(name=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {options['benchmark']!r}")
        origin = options["origin"]
        if os.sep in origin and not Import.objects.filter(benchmark=benchmark, origin=origin).exists():
            # The path given to import_benchmark: its origin is the file's name.
            origin = Path(origin).name
        try:
            removal = import_delete(benchmark=benchmark, origin=origin, dry_run=options["dry_run"])
        except (Import.DoesNotExist, ImportRemovalRefused) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(json.dumps(removal.as_dict(), indent=2) if options["json"] else removal.summary())
