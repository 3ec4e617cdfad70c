"""python manage.py evaluate_system NAME --result FILE [--json] [--per-target] [--save SYSTEM] [--split S]
[--judge-unscored [--top-k K] [--backend B] [--dry-run]] | --complete SYSTEM | --rescore SYSTEM"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from analysis.evaluation import COMPLETE_SETTINGS, ResultError, SystemEvaluator
from analysis.models import JudgementStatus, UnscoredJudgement
from analysis.services import (
    JudgingError,
    evaluation_check,
    evaluation_find,
    judgement_progress,
    judgement_report,
    judging_check,
    result_load,
    split_check,
    system_evaluate,
    system_evaluation_rescore,
    system_evaluation_save,
    system_judge_unscored,
)
from annotation.models import Benchmark
from crowdlex.progress import progress_bar
from crowds.interface import backend_names, default_backend_name


def _system_name(path: str) -> str:
    """A system named after its result file: ``bert-k.json.gz`` is ``bert-k``."""
    name = Path(path).name
    for suffix in (".gz", ".json", ".jsonl", ".tsv"):
        name = name.removesuffix(suffix)
    return name or "system"


class Command(BaseCommand):
    help = (
        "Evaluate a system's result file against a benchmark with the evaluation its scheme declares: the "
        "scheme's result format and figures (docs/evaluation.md). --judge-unscored also sends the system's "
        "top-k substitutes the benchmark never scored to the crowd (a batch under the benchmark's rules, its "
        "cost printed first); --complete SYSTEM then reports lenient, strict and complete figures with "
        "bootstrap intervals; --rescore SYSTEM scores a saved system again on the grown benchmark."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="benchmark name")
        parser.add_argument("--result", help="the result file, gzipped or not")
        parser.add_argument("--json", action="store_true", help="print the figures as JSON")
        parser.add_argument("--per-target", action="store_true", help="add each target's figures (with --json)")
        parser.add_argument("--split", help="only the targets of this split (benchmark_split)")
        parser.add_argument("--save", metavar="SYSTEM", help="keep the figures on the leaderboard under this name")
        parser.add_argument(
            "--judge-unscored",
            action="store_true",
            help="add the system's top-k substitutes the benchmark has not scored as candidates (source "
            "system:SYSTEM) and create the batch that judges them; saves the system (--save, or the file's name)",
        )
        parser.add_argument("--top-k", type=int, default=10, help="how many of each target's substitutes (10)")
        parser.add_argument(
            "--backend",
            choices=backend_names(),
            default=default_backend_name(),
            help="the crowd that judges them (the local queue)",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="with --judge-unscored: print what would be judged and its cost"
        )
        parser.add_argument(
            "--complete", metavar="SYSTEM", help="report the complete evaluation of SYSTEM, or how far its judging is"
        )
        parser.add_argument("--rescore", metavar="SYSTEM", help="score the saved SYSTEM again on the benchmark now")

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = Benchmark.objects.filter(name=options["name"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {options['name']!r}")
        chosen = [flag for flag in ("result", "complete", "rescore") if options[flag]]
        if len(chosen) != 1:
            raise CommandError("give one of --result FILE, --complete SYSTEM or --rescore SYSTEM")
        try:
            evaluator = evaluation_check(benchmark=benchmark)
            split_check(benchmark=benchmark, split=options["split"])
            if options["complete"]:
                self._complete(benchmark, evaluator, options)
            elif options["rescore"]:
                self._rescore(benchmark, evaluator, options)
            else:
                self._evaluate(benchmark, evaluator, options)
        except OSError as exc:
            raise CommandError(f"cannot read {options['result']}: {exc}") from exc
        except (ResultError, ValueError, LookupError) as exc:
            raise CommandError(str(exc)) from exc

    def _evaluate(self, benchmark: Benchmark, evaluator: SystemEvaluator, options: dict[str, Any]) -> None:
        judging = options["judge_unscored"]
        if judging:
            judging_check(benchmark=benchmark)
        system = options["save"] or (_system_name(options["result"]) if judging else None)
        stages = 3 if system else 2
        with progress_bar(self.stderr, desc="evaluating", unit="stage") as progress:
            result = result_load(benchmark=benchmark, source=options["result"], keep=bool(system))
            if progress is not None:
                progress(1, stages)
            figures = system_evaluate(
                benchmark=benchmark, result=result, per_target=options["per_target"], split=options["split"]
            )
            if progress is not None:
                progress(2, stages)
            if system and not judging:
                system_evaluation_save(
                    benchmark=benchmark, system=system, figures=figures, split=options["split"], result=result
                )
            if progress is not None:
                progress(stages, stages)
        if options["json"] and not judging:
            self.stdout.write(json.dumps(figures, indent=2))
            return
        if not options["json"]:
            self._figures(evaluator, figures)
        if not judging:
            return
        judgement = system_judge_unscored(
            benchmark=benchmark,
            system=system or "",
            result=result,
            figures=figures,
            split=options["split"],
            top_k=options["top_k"],
            backend=options["backend"],
            dry_run=options["dry_run"],
        )
        self._proposal(judgement, options, started=not options["dry_run"])

    def _proposal(self, judgement: UnscoredJudgement, options: dict[str, Any], *, started: bool) -> None:
        cost = judgement.cost
        targets = len(judgement.substitutes)
        summary = {
            "system": judgement.evaluation.system,
            "top_k": judgement.top_k,
            "substitutes": judgement.substitute_count,
            "targets": targets,
            "backend": judgement.backend,
            "cost": cost,
            "batch": judgement.batch_id,
            "judgement": judgement.pk if started else None,
        }
        if options["json"]:
            self.stdout.write(json.dumps(summary, indent=2))
            return
        self.stdout.write(
            f"unscored in the top {judgement.top_k}: {judgement.substitute_count:,} substitutes of "
            f"{targets:,} targets; judging them: {cost['hits']:,} HITs, {cost['assignments']:,} assignments, "
            f"${cost['total']} on {judgement.backend} (${cost['rewards_total']} rewards, ${cost['fees_total']} fees) "
            "for the first step; its later steps follow for the substitutes that pass"
        )
        if started:
            self.stdout.write(
                f"added as candidates ({judgement.import_record.origin if judgement.import_record else ''}) and "
                f"sent to be judged in batch {judgement.batch_id}; when it is done: evaluate_system "
                f"{judgement.benchmark.name} --complete {judgement.evaluation.system}"
            )
        else:
            self.stdout.write("dry run: nothing added, no batch created")

    def _complete(self, benchmark: Benchmark, evaluator: SystemEvaluator, options: dict[str, Any]) -> None:
        evaluation = evaluation_find(benchmark=benchmark, system=options["complete"], split=options["split"])
        judgement = (
            UnscoredJudgement.objects.filter(evaluation=evaluation)
            .exclude(status=JudgementStatus.PROPOSED)
            .order_by("-created_at", "-id")
            .first()
        )
        if judgement is None:
            raise JudgingError(
                f"{evaluation.system}'s unscored substitutes were never sent to be judged: run with --judge-unscored"
            )
        judgement = judgement_report(judgement=judgement)
        if judgement.report is None:
            progress = judgement_progress(judgement=judgement)
            message = (
                f"{evaluation.system}: {progress.settled:,} of {progress.total:,} substitutes judged so far "
                f"(batch {judgement.batch_id}); the complete figures follow when every one is"
            )
            self.stdout.write(json.dumps({"done": False, **vars(progress)}) if options["json"] else message)
            return
        report = judgement.report
        if options["json"]:
            self.stdout.write(json.dumps({"done": True, **report}, indent=2))
            return
        level = round(100 * report["bootstrap"]["level"])
        self.stdout.write(
            f"{evaluation.system}: {judgement.substitute_count:,} substitutes judged; {level}% bootstrap intervals "
            f"over targets ({report['bootstrap']['resamples']} resamples, seed {report['bootstrap']['seed']})"
        )
        width = max(len(figure.title) for figure in evaluator.complete_figures)
        self.stdout.write(f"{'':{width}} " + " ".join(f"{setting:>24}" for setting in COMPLETE_SETTINGS))
        for figure in evaluator.complete_figures:
            cells = []
            for setting in COMPLETE_SETTINGS:
                value = report["figures"][setting][figure.name]
                low, high = report["intervals"][setting][figure.name]
                cells.append(f"{value:7.2f} [{low:6.2f}, {high:6.2f}]".rjust(24))
            self.stdout.write(f"{figure.title:{width}} " + " ".join(cells))

    def _rescore(self, benchmark: Benchmark, evaluator: SystemEvaluator, options: dict[str, Any]) -> None:
        evaluation = evaluation_find(benchmark=benchmark, system=options["rescore"], split=options["split"])
        before = evaluation.version
        evaluation = system_evaluation_rescore(evaluation=evaluation)
        if options["json"]:
            rescored = {"version_before": before, "version": evaluation.version, **evaluation.figures}
            self.stdout.write(json.dumps(rescored))
            return
        self.stdout.write(
            f"{evaluation.system} scored again on {evaluation.version['candidates']:,} candidates and "
            f"{evaluation.version['labels']:,} labels"
            + (f" (was {before['candidates']:,} and {before['labels']:,})" if before else "")
        )
        self._figures(evaluator, evaluation.figures)

    def _figures(self, evaluator: SystemEvaluator, figures: dict[str, Any]) -> None:
        width = max(len(figure.title) for figure in evaluator.figures)
        for figure in evaluator.figures:
            value = figures[figure.name]
            shown = f"{value:10.{figure.decimals}f}" if figure.decimals else f"{value:10}"
            self.stdout.write(f"{figure.title:{width}} {shown}")
