"""python manage.py benchmark_stats NAME [--json]"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Benchmark
from annotation.selectors import benchmark_counts


class Command(BaseCommand):
    help = "Print a benchmark's counts: contexts, targets, candidates and labels (abstain included)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="benchmark name")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = Benchmark.objects.filter(name=options["name"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {options['name']!r}")
        stats = benchmark_counts(benchmark=benchmark)
        if options["json"]:
            self.stdout.write(json.dumps(stats, indent=2))
        else:
            for key, value in stats.items():
                self.stdout.write(f"{key:<12}{value:>10}")
