"""python manage.py benchmark_split NAME (--shares dev=0.5 test=0.5 [--seed N] | --list FILE)"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from analysis.services import SplitError, benchmark_split_import, benchmark_split_seeded
from annotation.models import Benchmark


class Command(BaseCommand):
    help = (
        "Split a benchmark's targets into named splits: by a seeded rule over contexts (--shares, --seed: the "
        "same seed gives the same splits), or by a CSV list with the columns target and split (--list). Replaces "
        "the benchmark's splits; exports, statistics and evaluate_system take --split."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="benchmark name")
        rule = parser.add_mutually_exclusive_group(required=True)
        rule.add_argument("--shares", nargs="+", metavar="NAME=SHARE", help="e.g. dev=0.5 test=0.5")
        rule.add_argument(
            "--list",
            metavar="FILE",
            help="CSV with the columns target (swords library id, external id or id) and split",
        )
        parser.add_argument("--seed", type=int, help="seed of the rule (default: the benchmark's)")

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = Benchmark.objects.filter(name=options["name"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {options['name']!r}")
        try:
            if options["list"]:
                counts = benchmark_split_import(benchmark=benchmark, source=options["list"])
            else:
                shares = [_share(text) for text in options["shares"]]
                seed = benchmark.seed if options["seed"] is None else options["seed"]
                counts = benchmark_split_seeded(benchmark=benchmark, shares=shares, seed=seed)
        except FileNotFoundError as exc:
            raise CommandError(
                f"no split list {options['list']}: give a CSV with the columns target and split"
            ) from exc
        except OSError as exc:
            raise CommandError(f"cannot read {options['list']}: {exc}") from exc
        except (SplitError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        for name, count in counts.items():
            self.stdout.write(f"{name:<20}{count:>8} targets")


def _share(text: str) -> tuple[str, float]:
    name, _, share = text.partition("=")
    try:
        return name, float(share)
    except ValueError as exc:
        raise SplitError(f"a share is NAME=NUMBER, not {text!r}") from exc
