"""Recompute spam filtering and advance a benchmark's pipeline now (the same service as the Celery task)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Benchmark
from crowdlex.progress import progress_bar
from review.selectors import pipeline_progress
from review.services import benchmark_refresh


class Command(BaseCommand):
    help = "Recompute spam decisions and flags, re-open filtered slots, and advance targets of BENCHMARK."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark name")

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = Benchmark.objects.filter(name=options["benchmark"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {options['benchmark']!r}")
        with progress_bar(self.stderr, desc="refreshing", unit="phase") as report:
            result = benchmark_refresh(benchmark=benchmark, full=True, progress=report)
        progress = pipeline_progress(benchmark=benchmark, with_targets=False)
        self.stdout.write(
            f"{benchmark.name}: filtered {result.filtered}, un-filtered {result.unfiltered}, "
            f"flags raised {result.flags_raised}, resolved {result.flags_resolved}, blocked {len(result.blocked)}; "
            f"advanced {len(result.advanced_targets)} target(s) to a later step"
            + (f" (batch {', '.join(map(str, result.followup_batches))})" if result.followup_batches else "")
            + f", {len(result.done_targets)} done, {len(result.reopened_targets)} re-opened"
        )
        stages = ", ".join(f"{stage} {count}" for stage, count in progress.targets_by_stage.items())
        self.stdout.write(f"targets: {stages}")
        for step in progress.steps:
            self.stdout.write(
                f"{step.title}: {step.labels_collected}/{step.labels_needed} {step.unit}, "
                f"{step.hits} HITs, {step.open_slots} open slots, {step.waiting} {step.waiting_noun}"
            )
