"""python manage.py evaluate_system NAME --result FILE [--json] [--per-target] [--save SYSTEM] [--split S]"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from analysis.evaluation import ResultError
from analysis.services import evaluation_check, result_load, split_check, system_evaluate, system_evaluation_save
from annotation.models import Benchmark
from crowdlex.progress import progress_bar


class Command(BaseCommand):
    help = (
        "Evaluate a system's result file against a benchmark with the evaluation its scheme declares: the "
        "scheme's result format and figures (docs/evaluation.md)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="benchmark name")
        parser.add_argument("--result", required=True, help="the result file, gzipped or not")
        parser.add_argument("--json", action="store_true", help="print the figures as JSON")
        parser.add_argument("--per-target", action="store_true", help="add each target's figures (with --json)")
        parser.add_argument("--split", help="only the targets of this split (benchmark_split)")
        parser.add_argument("--save", metavar="SYSTEM", help="keep the figures on the leaderboard under this name")

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = Benchmark.objects.filter(name=options["name"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {options['name']!r}")
        stages = 3 if options["save"] else 2
        try:
            evaluator = evaluation_check(benchmark=benchmark)
            split_check(benchmark=benchmark, split=options["split"])
            with progress_bar(self.stderr, desc="evaluating", unit="stage") as progress:
                result = result_load(benchmark=benchmark, source=options["result"])
                if progress is not None:
                    progress(1, stages)
                figures = system_evaluate(
                    benchmark=benchmark, result=result, per_target=options["per_target"], split=options["split"]
                )
                if progress is not None:
                    progress(2, stages)
                if options["save"]:
                    system_evaluation_save(
                        benchmark=benchmark, system=options["save"], figures=figures, split=options["split"]
                    )
                    if progress is not None:
                        progress(3, stages)
        except OSError as exc:
            raise CommandError(f"cannot read {options['result']}: {exc}") from exc
        except (ResultError, ValueError, LookupError) as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(figures, indent=2))
            return
        width = max(len(figure.title) for figure in evaluator.figures)
        for figure in evaluator.figures:
            value = figures[figure.name]
            shown = f"{value:10.{figure.decimals}f}" if figure.decimals else f"{value:10}"
            self.stdout.write(f"{figure.title:{width}} {shown}")
