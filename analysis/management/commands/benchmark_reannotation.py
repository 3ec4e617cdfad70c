"""python manage.py benchmark_reannotation NAME [ORIGIN | --clear]"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from analysis.selectors import import_origins, reannotation_origin
from analysis.services import benchmark_reannotation_set
from annotation.models import Benchmark


class Command(BaseCommand):
    help = (
        "Mark the labels imported from ORIGIN as a re-annotation of the benchmark (Lee et al. 2021, App. C.1), "
        "or clear the mark. Without ORIGIN, list the benchmark's import origins."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="benchmark name")
        parser.add_argument("origin", nargs="?", help="import origin of the re-annotation")
        parser.add_argument("--clear", action="store_true", help="no re-annotation")

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = Benchmark.objects.filter(name=options["name"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {options['name']!r}")
        if options["clear"] or options["origin"]:
            try:
                benchmark_reannotation_set(benchmark=benchmark, origin=None if options["clear"] else options["origin"])
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
        marked = reannotation_origin(benchmark)
        for origin in import_origins(benchmark=benchmark):
            self.stdout.write(f"{'*' if origin == marked else ' '} {origin}")
