"""python manage.py budget_plan NAME [--json] [--batch ID] [--simulations N] [--resamples R] [--seed S]
[--confidence C]"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from analysis.services.budget import BudgetUnavailable, budget_plan
from annotation.models import Benchmark
from hits.models import Batch


class Command(BaseCommand):
    help = (
        "The budget planner: from the labels collected so far, the labels, assignments and money still needed "
        "to finish under each stopping policy, with an interval from seeded simulations (docs/analysis.md)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="benchmark name")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument("--batch", type=int, help="price with this batch's reward and crowd (default: the latest)")
        parser.add_argument(
            "--simulations", type=int, help="simulated completions for the estimate (default: BUDGET_PLAN_SIMULATIONS)"
        )
        parser.add_argument(
            "--resamples",
            type=int,
            help="simulated completions under priors refitted to resamples of the targets labelled so far, for the "
            "interval (default: BUDGET_PLAN_RESAMPLES; 0: the interval of the simulations alone)",
        )
        parser.add_argument("--seed", type=int, help="seed of the simulations (default: the benchmark's)")
        parser.add_argument("--confidence", type=float, default=0.9, help="share of the interval's runs inside it")

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = Benchmark.objects.filter(name=options["name"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {options['name']!r}")
        batch = None
        if options["batch"] is not None:
            batch = Batch.objects.filter(benchmark=benchmark, pk=options["batch"]).first()
            if batch is None:
                raise CommandError(f"benchmark {benchmark.name!r} has no batch {options['batch']}")
        try:
            plan = budget_plan(
                benchmark=benchmark,
                batch=batch,
                simulations=options["simulations"],
                resamples=options["resamples"],
                seed=options["seed"],
                confidence=options["confidence"],
            )
        except (BudgetUnavailable, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(plan, indent=2))
            return
        self.stdout.write(
            f"{plan['benchmark']}: {plan['labels_so_far']} labels so far on {plan['candidates_with_labels']} of "
            f"{plan['candidates']} candidates; reward {plan['reward']} on {plan['backend']}"
            f"{' with its fee' if plan['with_fee'] else ''}"
        )
        share = round(100 * plan["confidence"])
        for row in plan["policies"]:
            if not row["available"]:
                self.stdout.write(f"  {row['policy']:<10} {row['note']}")
                continue
            labels, cost = row["labels"], row["cost"]
            interval = (
                "exact"
                if row["exact"]
                else f"{share} %: {labels['low']}-{labels['high']} labels, ${cost['low']}-${cost['high']}"
            )
            assignments = row["assignments"]["estimate"]
            self.stdout.write(
                f"  {row['policy']:<10} {labels['estimate']:>9} labels  {assignments:>7} assignments  "
                f"${cost['estimate']:>10}  ({interval})"
            )
