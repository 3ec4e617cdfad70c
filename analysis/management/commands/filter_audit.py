"""python manage.py filter_audit NAME [--json] [--step2-labels N] [--pass-min-accepts M] [--min-labels L]"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from analysis.services import benchmark_filter_audit
from annotation.models import Benchmark


class Command(BaseCommand):
    help = (
        "The filter audit (Lee et al. 2021, §4.4): on candidates labeled in full, how many step 2 would drop "
        "(fewer than pass_min_accepts accepts in their first step2_labels labels), how many of those still "
        "get an accept, and how many of these are not acceptable. Settings default to the benchmark's."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="benchmark name")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument("--step2-labels", type=int, help="labels collected in step 2 (default: the benchmark's)")
        parser.add_argument("--pass-min-accepts", type=int, help="accepts needed to pass step 2")
        parser.add_argument("--min-labels", type=int, help="audit candidates with at least this many labels")

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = Benchmark.objects.filter(name=options["name"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {options['name']!r}")
        try:
            audit = benchmark_filter_audit(
                benchmark=benchmark,
                step2_labels=options["step2_labels"],
                pass_min_accepts=options["pass_min_accepts"],
                min_labels=options["min_labels"],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(audit, indent=2))
            return
        self.stdout.write(
            f"step2_labels={audit['step2_labels']} pass_min_accepts={audit['pass_min_accepts']} "
            f"on {audit['audited']} candidates with at least {audit['min_labels']} labels"
        )
        for key in ("dropped", "dropped_with_accept", "dropped_with_accept_unacceptable", "dropped_acceptable"):
            self.stdout.write(f"  {key:<36}{audit[key]:>10}")
        for key in (
            "share_dropped",
            "share_dropped_with_accept",
            "share_still_unacceptable",
            "share_of_acceptable_lost",
        ):
            value = audit[key]
            self.stdout.write(f"  {key:<36}{'-' if value is None else f'{value:.3f}':>10}")
