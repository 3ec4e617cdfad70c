"""python manage.py evaluate_system NAME --result FILE [--json] [--per-target] [--save SYSTEM] [--split S]"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from analysis.evaluation import ResultError
from analysis.services import evaluation_check, result_load, split_check, system_evaluate, system_evaluation_save
from annotation.models import Benchmark

ROWS = (
    ("F^10 lenient", "f10_lenient"),
    ("F_c^10 lenient", "fc10_lenient"),
    ("F^10 strict", "f10_strict"),
    ("F_c^10 strict", "fc10_strict"),
    ("P^10 lenient", "p10_lenient"),
    ("R^10 lenient", "r10_lenient"),
    ("GAP", "gap"),
)


class Command(BaseCommand):
    help = (
        "Evaluate a system's result file (the swords library's format) against a benchmark as the library "
        "does: P/R/F at 10, lenient and strict, acceptable and conceivable, and GAP, in percent."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="benchmark name")
        parser.add_argument("--result", required=True, help="result JSON file, gzipped or not")
        parser.add_argument("--json", action="store_true", help="print the figures as JSON")
        parser.add_argument("--per-target", action="store_true", help="add each target's figures (with --json)")
        parser.add_argument("--split", help="only the targets of this split (benchmark_split)")
        parser.add_argument("--save", metavar="SYSTEM", help="keep the figures on the leaderboard under this name")

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = Benchmark.objects.filter(name=options["name"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {options['name']!r}")
        try:
            evaluation_check(benchmark=benchmark)
            split_check(benchmark=benchmark, split=options["split"])
            result = result_load(source=options["result"])
            figures = system_evaluate(
                benchmark=benchmark, result=result, per_target=options["per_target"], split=options["split"]
            )
            if options["save"]:
                system_evaluation_save(
                    benchmark=benchmark, system=options["save"], figures=figures, split=options["split"]
                )
        except (ResultError, ValueError, LookupError) as exc:
            raise CommandError(str(exc)) from exc
        document = figures.as_dict()
        if options["json"]:
            self.stdout.write(json.dumps(document, indent=2))
            return
        for title, key in ROWS:
            self.stdout.write(f"{title:16} {document[key]:6.2f}")
        self.stdout.write(f"targets evaluated {figures.targets_evaluated}, missing {figures.targets_missing}")
