"""python manage.py candidates_add NAME --source wordnet [--targets ID_OR_WORD ...] [--json]"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Benchmark
from annotation.services import CANDIDATE_SOURCES, candidates_add


class Command(BaseCommand):
    help = (
        "Add candidates to a benchmark's targets from a source (wordnet: WordNet 3.0's synonyms and similar words "
        "of each target's lemma for its part of speech), as one import under the source's name; the report says "
        "how many were new (created) and how many the targets had already (merged or skipped)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="benchmark name")
        parser.add_argument("--source", required=True, choices=list(CANDIDATE_SOURCES))
        parser.add_argument("--targets", nargs="+", metavar="ID_OR_WORD", help="only these targets (ids or words)")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = Benchmark.objects.filter(name=options["name"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {options['name']!r}")
        try:
            report = candidates_add(benchmark=benchmark, source=options["source"], targets=options["targets"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(json.dumps(report.as_dict(), indent=2) if options["json"] else report.summary())
