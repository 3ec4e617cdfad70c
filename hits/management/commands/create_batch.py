"""python manage.py create_batch BENCHMARK --step N --seed N [--targets ID ...] [--design FILE] ...

Prints a summary, then the new batch's id alone on the last line (for scripts).
"""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Benchmark
from annotation.services import workers_by_username
from crowdlex.progress import progress_bar
from crowds.interface import backend_names, default_backend_name
from hits.design import design_options
from hits.services import HitsGenerationError, hits_generate
from schemes.design import DesignInvalid, error_lines


def _reward(value: str) -> Decimal:
    try:
        return Decimal(value)
    except InvalidOperation as error:
        raise ValueError(value) from error


def _design(path: str, *, benchmark: Benchmark, step: int, given: dict[str, Any]) -> dict[str, Any]:
    """The batch options a ``--design`` file gives, or a CommandError naming the file, the line (of a
    file that is not JSON) or each refused field."""
    try:
        with open(path, encoding="utf-8") as file:
            data = json.load(file)
    except OSError as error:
        raise CommandError(f"{path}: cannot be read ({error.strerror})") from error
    except UnicodeDecodeError as error:
        raise CommandError(f"{path}: is not UTF-8 text ({error.reason})") from error
    except json.JSONDecodeError as error:
        raise CommandError(f"{path}, line {error.lineno}, column {error.colno}: not JSON ({error.msg})") from error
    try:
        return design_options(benchmark=benchmark, step=step, data=data, given=given)
    except DesignInvalid as invalid:
        raise CommandError(f"{path}: " + "; ".join(error_lines(invalid))) from invalid


class Command(BaseCommand):
    help = "Generate a batch of HITs for one step of a benchmark and print its id last."
    # Django's system checks load every URL and view module: a third of a second spent on each run
    # of a data command that serves no page (``manage.py check`` and the server still run them).
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark name (or id)")
        parser.add_argument("--step", type=int, required=True, help="one of the scheme's steps that collects work")
        parser.add_argument("--seed", type=int, required=True, help="the same seed gives the same HITs")
        parser.add_argument("--targets", type=int, nargs="+", metavar="ID", help="target ids (default: all waiting)")
        parser.add_argument("--backend", choices=backend_names(), default=default_backend_name())
        parser.add_argument("--assignments", type=int, help="assignments per HIT (default: the benchmark's)")
        parser.add_argument(
            "--reward", type=_reward, help="reward per assignment in dollars (default: the benchmark's)"
        )
        parser.add_argument("--assignment-minutes", type=int, help="time a worker has to submit a claimed HIT")
        parser.add_argument(
            "--force", action="store_true", help="generate even for candidates already in an open batch of the step"
        )
        parser.add_argument(
            "--annotators",
            nargs="+",
            metavar="USERNAME",
            help="assign the work to these accounts (each target to one of them; a scheme of named annotators "
            "needs them)",
        )
        parser.add_argument(
            "--overlap", type=int, default=0, help="targets that two of the annotators both judge (for agreement)"
        )
        parser.add_argument(
            "--design",
            metavar="FILE",
            help='a JSON file of the batch\'s task design (docs/batches.md, "Task design"); default: the '
            "benchmark's template",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["benchmark"]
        benchmark = Benchmark.objects.filter(name=name).first()
        if benchmark is None and name.isdigit():
            benchmark = Benchmark.objects.filter(pk=int(name)).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {name!r}")
        batch_options: dict[str, Any] = {}
        if options["assignment_minutes"] is not None:
            if options["assignment_minutes"] < 1:
                raise CommandError("--assignment-minutes must be at least 1")
            batch_options["assignment_duration"] = timedelta(minutes=options["assignment_minutes"])
        if options["design"]:
            batch_options.update(
                _design(options["design"], benchmark=benchmark, step=options["step"], given=batch_options)
            )
        try:
            annotators = workers_by_username(usernames=options["annotators"]) if options["annotators"] else None
        except ValueError as error:
            raise CommandError(str(error)) from error
        try:
            with progress_bar(self.stderr, desc="planning HITs", unit="target") as progress:
                batch = hits_generate(
                    progress=progress,
                    benchmark=benchmark,
                    step=options["step"],
                    seed=options["seed"],
                    targets=options["targets"],
                    backend=options["backend"],
                    assignments_per_hit=options["assignments"],
                    reward=options["reward"],
                    force=options["force"],
                    annotators=annotators,
                    overlap=options["overlap"],
                    **batch_options,
                )
        except HitsGenerationError as error:
            raise CommandError(str(error)) from error
        hits = batch.hits.count()
        targets = batch.hits.values("target").distinct().count()
        self.stdout.write(
            f"batch {batch.pk} of {benchmark.name}: step {batch.step}, {hits} HITs for {targets} targets, "
            f"{batch.assignments_per_hit} assignments each at ${batch.reward}, backend {batch.backend}"
        )
        self.stdout.write(str(batch.pk))
