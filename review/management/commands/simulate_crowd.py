"""Rehearse a collection: run a simulated crowd through a benchmark's pipeline and report."""

from __future__ import annotations

import json
import logging
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Benchmark
from crowdlex.progress import progress_bar
from review.simulation import SimulationError, crowd_simulate

QUIET_LOGGERS = ("celery.app.trace", "review.services", "hits.services.generation")


class Command(BaseCommand):
    help = (
        "Create simulated workers (honest, spammers, bots), run them through the real claim/submit services "
        "and the pipeline until every target is done or no progress is possible, and report."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark name")
        parser.add_argument("--targets", type=int, default=None, help="simulate only the first N targets")
        parser.add_argument("--honest", type=int, required=True, help="honest workers")
        parser.add_argument("--spammers", type=int, required=True, help="workers who click at random")
        parser.add_argument("--bots", type=int, default=0, help="bots: half accept everything, half answer instantly")
        parser.add_argument("--seed", type=int, default=0, help="seed of the crowd's behaviour and of new HITs")
        parser.add_argument("--json", action="store_true", help="print the report as one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = Benchmark.objects.filter(name=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {options['benchmark']!r}")
        # Hundreds of eager task runs and refreshes would bury the report in log lines.
        noisy = [logging.getLogger(name) for name in QUIET_LOGGERS]
        levels = [logger.level for logger in noisy]
        for logger in noisy:
            logger.setLevel(max(logging.WARNING, logger.level))
        try:
            with progress_bar(self.stderr, desc="targets done", unit="target") as progress:
                report = crowd_simulate(
                    benchmark=benchmark,
                    honest=options["honest"],
                    spammers=options["spammers"],
                    bots=options["bots"],
                    seed=options["seed"],
                    targets=options["targets"],
                    progress=progress,
                )
        except SimulationError as error:
            raise CommandError(str(error)) from None
        finally:
            for logger, level in zip(noisy, levels, strict=True):
                logger.setLevel(level)
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(), sort_keys=True))
            return
        lines = [
            f"benchmark {report.benchmark} (seed {report.seed}): "
            + ("finished" if report.finished else "stopped before the end"),
            f"targets done: {report.targets_done}/{report.targets}; candidates scored {report.candidates_scored}, "
            f"dropped {report.candidates_dropped} of {report.candidates}",
            f"spammers caught: {report.spammers_caught}/{report.spammers}; honest workers flagged: "
            f"{report.honest_flagged}/{report.honest}; bots flagged: {report.bots_flagged}/{report.bots}",
            f"assignments: {report.assignments} ({report.filtered_assignments} filtered, "
            f"{report.recollected_hits} HITs re-collected); labels: {report.labels} ({report.valid_labels} valid)",
            f"cost: ${report.cost} (${report.cost_filtered} on filtered work) at ${report.reward} per assignment",
            f"{report.rounds} rounds in {report.seconds} s",
        ]
        if report.stuck:
            lines.append(f"stuck: {report.stuck}")
        self.stdout.write("\n".join(lines))
