"""python manage.py benchmark_stats NAME [--json] [--acceptable A] [--conceivable C] [--reannotation O] [--split S]"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from analysis.aggregation import METHODS
from analysis.figures import StatisticsOptions, benchmark_figures, scheme_figures
from analysis.services import split_check
from annotation.models import Benchmark
from schemes.scores import ScoreThresholds


class Command(BaseCommand):
    help = (
        "Print a benchmark's statistics as its scheme reports them. For a scheme judging candidates (as in "
        "Table 2 of Lee et al. 2021): counts of contexts, targets, candidates and labels (abstain included), "
        "per-target means of candidates, inconceivable, conceivable and acceptable ones, the share of abstain "
        "labels, and breakdowns by part of speech and by source."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="benchmark name")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument("--acceptable", type=float, default=0.5, help="acceptable: score above this (0.5)")
        parser.add_argument("--conceivable", type=float, default=0.0, help="conceivable: score above this (0)")
        parser.add_argument(
            "--reannotation", help="import origin to leave out as a re-annotation (default: the one marked; '' none)"
        )
        parser.add_argument("--split", help="only the targets of this split (benchmark_split)")
        parser.add_argument(
            "--aggregation",
            choices=METHODS,
            help="also sum up this worker-aware model's posteriors beside the score (dawid_skene or mace)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = Benchmark.objects.filter(name=options["name"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {options['name']!r}")
        try:
            thresholds = ScoreThresholds(acceptable=options["acceptable"], conceivable=options["conceivable"])
            split_check(benchmark=benchmark, split=options["split"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        stats = benchmark_figures(
            benchmark=benchmark,
            options=StatisticsOptions(
                thresholds=thresholds,
                reannotation=options["reannotation"],
                split=options["split"],
                aggregation=options["aggregation"],
            ),
        )
        if options["json"]:
            self.stdout.write(json.dumps(stats, indent=2))
            return
        for line in scheme_figures(benchmark).summary(stats):
            self.stdout.write(line)
