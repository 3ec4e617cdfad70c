"""Rehearse a collection: run a simulated crowd through a benchmark's pipeline and report."""

from __future__ import annotations

import json
import logging
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Benchmark
from crowdlex.progress import progress_bar
from review.replay import DEFAULT_REPLAY_WAVE, DEFAULT_REPLAY_WORKERS, ReplayReport, crowd_replay
from review.simulation import SimulationError, SimulationReport, crowd_simulate, truth_load

QUIET_LOGGERS = ("celery.app.trace", "review.services", "hits.services.generation")


class Command(BaseCommand):
    help = (
        "Create simulated workers (honest, spammers, bots, LLM-assisted), run them through the real claim/submit "
        "services and the pipeline until every target is done or no progress is possible, and report. With "
        "--replay, a replay crowd answers every HIT from a released benchmark's labels instead."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark name")
        parser.add_argument("--targets", type=int, default=None, help="simulate only the first N targets")
        parser.add_argument("--honest", type=int, default=None, help="honest workers (required without --replay)")
        parser.add_argument(
            "--spammers", type=int, default=None, help="workers who click at random (required without --replay)"
        )
        parser.add_argument("--bots", type=int, default=0, help="bots: half accept everything, half answer instantly")
        parser.add_argument(
            "--llm", type=int, default=0, help="LLM-assisted workers: a chatbot in another tab, or an agent"
        )
        parser.add_argument("--seed", type=int, default=0, help="seed of the crowd's behaviour and of new HITs")
        parser.add_argument(
            "--replay",
            metavar="FILE",
            default=None,
            help="answer from the labels of this released benchmark, in its scheme's format (gzipped or not), "
            'each candidate\'s drawn without replacement in a seeded order (docs/pipeline.md, "The replay crowd")',
        )
        parser.add_argument(
            "--workers",
            type=int,
            default=DEFAULT_REPLAY_WORKERS,
            help=f"workers of the replay crowd (default {DEFAULT_REPLAY_WORKERS})",
        )
        parser.add_argument(
            "--truth",
            metavar="FILE",
            default=None,
            help="CSV with the columns target (id or external id), candidate and accept (a share from 0 to 1, or "
            "accept / reject): the crowd answers those candidates from it instead of its hidden draw",
        )
        parser.add_argument(
            "--wave",
            type=int,
            default=DEFAULT_REPLAY_WAVE,
            help="with --replay on a benchmark without batches: targets collected at a time, each part's batch "
            f"made once the part before it is done (default {DEFAULT_REPLAY_WAVE})",
        )
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
        replay = options["replay"]
        if replay is not None:
            mixed = [f"--{name}" for name in ("honest", "spammers", "bots", "llm") if options[name]]
            if mixed:
                raise CommandError(f"--replay answers with its own crowd: drop {', '.join(mixed)} (or --replay)")
        elif options["honest"] is None or options["spammers"] is None:
            raise CommandError("give --honest and --spammers (or --replay FILE)")
        if replay is not None and options["truth"]:
            raise CommandError("--replay answers from its release: drop --truth (or --replay)")
        try:
            with progress_bar(self.stderr, desc="targets done", unit="target") as progress:
                report: SimulationReport
                if replay is not None:
                    report = crowd_replay(
                        benchmark=benchmark,
                        path=replay,
                        seed=options["seed"],
                        workers=options["workers"],
                        targets=options["targets"],
                        progress=progress,
                        wave=options["wave"],
                    )
                else:
                    truth = truth_load(benchmark=benchmark, source=options["truth"]) if options["truth"] else None
                    report = crowd_simulate(
                        benchmark=benchmark,
                        honest=options["honest"],
                        spammers=options["spammers"],
                        bots=options["bots"],
                        llm=options["llm"],
                        seed=options["seed"],
                        targets=options["targets"],
                        progress=progress,
                        truth=truth,
                    )
        except SimulationError as error:
            raise CommandError(str(error)) from None
        finally:
            for logger, level in zip(noisy, levels, strict=True):
                logger.setLevel(level)
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(), sort_keys=True))
            return
        if isinstance(report, ReplayReport):
            self.stdout.write(self._replay_lines(report))
            return
        lines = [
            f"benchmark {report.benchmark} (seed {report.seed}): "
            + ("finished" if report.finished else "stopped before the end"),
            f"targets done: {report.targets_done}/{report.targets}; candidates scored {report.candidates_scored}, "
            f"dropped {report.candidates_dropped} of {report.candidates}",
            f"spammers caught: {report.spammers_caught}/{report.spammers}; honest workers flagged: "
            f"{report.honest_flagged}/{report.honest}; bots flagged: {report.bots_flagged}/{report.bots}; "
            f"LLM-assisted workers flagged: {report.llm_flagged}/{report.llm}",
            f"by telemetry signals: honest {report.honest_flagged_by_telemetry}/{report.honest}, "
            f"LLM-assisted {report.llm_flagged_by_telemetry}/{report.llm}",
            f"assignments: {report.assignments} ({report.filtered_assignments} filtered, "
            f"{report.recollected_hits} HITs re-collected); labels: {report.labels} ({report.valid_labels} valid)",
            f"cost: ${report.cost} (${report.cost_filtered} on filtered work) at ${report.reward} per assignment",
            f"{report.rounds} rounds in {report.seconds} s",
        ]
        if report.stuck:
            lines.append(f"stuck: {report.stuck}")
        self.stdout.write("\n".join(lines))

    def _replay_lines(self, report: ReplayReport) -> str:
        lines = [
            f"benchmark {report.benchmark} (seed {report.seed}) replayed from {report.replay} under the "
            f"{report.stopping_policy} policy: " + ("finished" if report.finished else "stopped before the end"),
            f"targets done: {report.targets_done}/{report.targets}; candidates scored {report.candidates_scored}, "
            f"dropped {report.candidates_dropped} of {report.candidates}",
            f"labels: {report.labels} ({report.valid_labels} valid); drawn from the release {report.labels_drawn} "
            f"of {report.released_labels}, drawn again beyond it {report.labels_beyond_release}; candidates whose "
            f"released labels ran out: {report.candidates_exhausted}; HITs handed back with nothing left to draw: "
            f"{report.hits_returned}",
            f"assignments: {report.assignments}; cost: ${report.cost} at ${report.reward} per assignment",
            f"{report.rounds} rounds in {report.seconds} s",
        ]
        if report.stuck:
            lines.append(f"stuck: {report.stuck}")
        return "\n".join(lines)
