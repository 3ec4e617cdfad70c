"""python manage.py benchmark_stats NAME [--json] [--acceptable 0.5] [--conceivable 0.0] [--reannotation ORIGIN]"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from analysis.services import benchmark_data, benchmark_statistics
from annotation.models import Benchmark
from schemes.swords.scores import ScoreThresholds


class Command(BaseCommand):
    help = (
        "Print a benchmark's statistics (SWORDS Table 2): counts of contexts, targets, candidates and labels "
        "(abstain included), per-target means of candidates, inconceivable, conceivable and acceptable ones, "
        "the share of abstain labels, and breakdowns by part of speech and by source."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="benchmark name")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument("--acceptable", type=float, default=0.5, help="acceptable: score above this (0.5)")
        parser.add_argument("--conceivable", type=float, default=0.0, help="conceivable: score above this (0)")
        parser.add_argument(
            "--reannotation", help="import origin to leave out as a re-annotation (default: the one marked; '' none)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = Benchmark.objects.filter(name=options["name"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {options['name']!r}")
        try:
            thresholds = ScoreThresholds(acceptable=options["acceptable"], conceivable=options["conceivable"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        stats = benchmark_statistics(
            benchmark=benchmark,
            thresholds=thresholds,
            data=benchmark_data(benchmark=benchmark, reannotation_origin=options["reannotation"]),
        )
        if options["json"]:
            self.stdout.write(json.dumps(stats, indent=2))
            return
        for key in ("contexts", "targets", "candidates", "labels"):
            self.stdout.write(f"{key:<28}{stats[key]:>12}")
        self.stdout.write(f"{'abstain share':<28}{_number(stats['abstain_share']):>12}")
        self.stdout.write(f"\n{'per target':<28}{'all targets':>12}{'targets with it':>18}")
        for key, value in stats["per_target"].items():
            nonempty = stats["per_target_nonempty"][key]
            self.stdout.write(f"  {key:<26}{_number(value):>12}{_number(nonempty):>18}")
        self.stdout.write(f"\n{'by source':<20}{'candidates':>12}{'mean score':>12}{'acceptable':>12}")
        for group, row in stats["by_source"].items():
            self.stdout.write(
                f"  {group:<18}{row['candidates']:>12}{_number(row['mean_score']):>12}{row['acceptable']:>12}"
            )
        self.stdout.write(f"\n{'by part of speech':<20}{'targets':>12}{'candidates':>12}{'acceptable/t':>14}")
        for pos, row in stats["by_pos"].items():
            self.stdout.write(
                f"  {pos:<18}{row['targets']:>12}{row['candidates']:>12}{_number(row['per_target']['acceptable']):>14}"
            )


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
