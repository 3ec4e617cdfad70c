"""python manage.py benchmark_agreement NAME [--json] [--resamples 1000] [--min-overlap 1] [--reannotation ORIGIN]"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from analysis.services import benchmark_agreement, benchmark_data
from annotation.models import Benchmark
from crowdlex.progress import progress_bar


class Command(BaseCommand):
    help = (
        "Agreement figures of a benchmark: Krippendorff's alpha (nominal) with a bootstrap interval, each "
        "worker against the leave-one-out majority, Cohen's kappa per pair of workers (abstain excluded) and, "
        "with a re-annotation, rank-biased overlap against k sampled labels."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="benchmark name")
        parser.add_argument("--json", action="store_true", help="print one JSON object (with every pair)")
        parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (1000)")
        parser.add_argument("--min-overlap", type=int, default=1, help="common candidates a pair needs (1)")
        parser.add_argument("--seed", type=int, help="default: the benchmark's seed")
        parser.add_argument(
            "--reannotation", help="import origin to use as the re-annotation (default: the one marked; '' none)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        for option in ("resamples", "min_overlap"):
            if options[option] < 1:
                flag = "--" + option.replace("_", "-")
                raise CommandError(f"{flag} must be a whole number >= 1, not {options[option]}")
        benchmark = Benchmark.objects.filter(name=options["name"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {options['name']!r}")
        with progress_bar(self.stderr, desc="agreement", unit="figure") as progress:
            result = benchmark_agreement(
                benchmark=benchmark,
                resamples=options["resamples"],
                min_overlap=options["min_overlap"],
                seed=options["seed"],
                include_pairs=options["json"],
                data=benchmark_data(benchmark=benchmark, reannotation_origin=options["reannotation"]),
                progress=progress,
            )
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2))
            return
        for key in ("alpha", "alpha_without_abstain"):
            alpha = result[key]
            self.stdout.write(
                f"{key:<24}{_number(alpha['alpha'])}  [{_number(alpha['low'])}, {_number(alpha['high'])}] "
                f"over {alpha['units']} candidates"
            )
        summary = result["kappa"]["summary"]
        self.stdout.write(
            f"{'cohen kappa':<24}{_number(summary['mean'])} mean, {_number(summary['weighted_mean'])} weighted, "
            f"{summary['pairs']} pairs"
        )
        self.stdout.write(f"{'workers':<24}{result['workers']}")
        if result["rbo"]:
            for point in result["rbo"]["points"]:
                self.stdout.write(f"  RBO k={point['k']}: {_number(point['mean'])} ± {_number(point['std'])}")


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
