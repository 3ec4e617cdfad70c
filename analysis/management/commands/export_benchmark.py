"""python manage.py export_benchmark NAME --format FORMAT --output PATH (formats: analysis.exports)"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser, OutputWrapper

from analysis.exports import export_format_names, unknown_format
from analysis.services import benchmark_export, benchmark_export_to_path
from annotation.models import Benchmark


class _Unterminated:
    """Writes pieces to a command's output as they are, without the newline it adds to each."""

    def __init__(self, out: OutputWrapper) -> None:
        self.out = out

    def write(self, text: str) -> int:
        self.out.write(text, ending="")
        return len(text)


class Command(BaseCommand):
    help = (
        "Export a benchmark as SWORDS JSON, a CSV of labels or of candidates, its statistics as JSON, or its "
        "scheme's released format. "
        "Written as a stream in bounded memory; gzip-compressed when PATH ends in .gz; '-' writes to stdout."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="benchmark name")
        parser.add_argument("--format", required=True, choices=export_format_names())
        parser.add_argument("--output", required=True, help="file to write (.gz: compressed), or - for stdout")

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = Benchmark.objects.filter(name=options["name"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {options['name']!r}")
        problem = unknown_format(options["format"], benchmark)
        if problem is not None:
            raise CommandError(problem)
        if options["output"] == "-":
            benchmark_export(benchmark=benchmark, format=options["format"], out=_Unterminated(self.stdout))
            return
        try:
            path = benchmark_export_to_path(benchmark=benchmark, format=options["format"], path=options["output"])
        except OSError as exc:
            raise CommandError(f"cannot write {options['output']}: {exc}") from exc
        self.stderr.write(f"wrote {path} ({path.stat().st_size} bytes)")
