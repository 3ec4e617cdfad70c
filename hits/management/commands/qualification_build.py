"""python manage.py qualification_build BENCHMARK (--from-benchmark OTHER | --gold FILE) --length N --pass-mark X

Builds the qualification test that new annotators of BENCHMARK take once before its HITs are offered
to them (docs/qualification.md), and prints what it holds.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.importers.errors import ImportFailed
from annotation.models import Benchmark
from hits.qualification import (
    ClearScores,
    QualificationRefused,
    gold_items_from_benchmark,
    gold_items_from_path,
    gold_scheme,
    qualification_build,
)


def _benchmark(name: str) -> Benchmark:
    found = Benchmark.objects.filter(name=name).first()
    if found is None:
        raise CommandError(f"no benchmark named {name!r}")
    return found


class Command(BaseCommand):
    help = "Build a benchmark's qualification test from gold items (a JSONL/CSV file, or a finished benchmark)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="the benchmark whose HITs the test gates")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--from-benchmark", metavar="OTHER", help="pick gold items from OTHER's clear scores")
        source.add_argument("--gold", metavar="FILE", help="hand-written gold items, JSONL or .csv")
        parser.add_argument("--length", type=int, required=True, help="items per attempt")
        parser.add_argument("--pass-mark", type=float, required=True, help="share as expected to pass, e.g. 0.8")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--min-labels", type=int, default=10, help="--from-benchmark: valid labels at least")
        parser.add_argument("--accept-min", type=float, default=0.9, help="--from-benchmark: gold accept at or above")
        parser.add_argument("--reject-max", type=float, default=0.0, help="--from-benchmark: gold reject at or below")
        parser.add_argument("--items", type=int, help="--from-benchmark: keep at most this many (half each way)")

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = _benchmark(options["benchmark"])
        try:
            # Refused first, with the reason, where the benchmark's scheme offers no test.
            gold = gold_scheme(benchmark).gold
            if options["from_benchmark"]:
                other = _benchmark(options["from_benchmark"])
                try:
                    clear = ClearScores(options["min_labels"], options["accept_min"], options["reject_max"])
                except ValueError as error:
                    raise CommandError(str(error)) from error
                items = gold_items_from_benchmark(
                    benchmark=other, clear=clear, limit=options["items"], seed=options["seed"]
                )
                source = (
                    f"benchmark {other.name} (>= {clear.min_labels} labels, "
                    f"score >= {clear.accept_min} or <= {clear.reject_max})"
                )
                if not items:
                    raise CommandError(
                        f"{other.name} has no candidate with at least {clear.min_labels} valid labels and a score "
                        f">= {clear.accept_min} or <= {clear.reject_max}: no gold items to build a test from"
                    )
            else:
                items = gold_items_from_path(options["gold"], gold=gold)
                source = f"file {options['gold']}"
            test = qualification_build(
                benchmark=benchmark,
                items=items,
                length=options["length"],
                pass_mark=options["pass_mark"],
                seed=options["seed"],
                source=source,
            )
        except ImportFailed as error:
            raise CommandError(error.describe()) from error
        except QualificationRefused as error:
            raise CommandError(error.message) from error
        expected = [item.expected for item in test.items.all()]
        counts = ", ".join(f"{expected.count(label)} expect {gold.word(label)}" for label in gold.labels)
        self.stdout.write(
            f"Qualification test of {benchmark.name}: {len(expected)} gold items ({counts}) from {source}; "
            f"{test.length} per attempt, pass mark {test.pass_mark:.0%}."
        )
