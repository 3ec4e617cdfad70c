"""python manage.py benchmark_plot NAME PLOT --output FILE.svg|FILE.png"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from analysis.plot_files import FILE_TYPES, PlotError, plot_file, plot_names
from annotation.models import Benchmark


class Command(BaseCommand):
    help = (
        "Write one of a benchmark's plots (those of its statistics page, as its scheme declares them) "
        "as SVG or PNG, by the output's suffix. --list names the benchmark's plots."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="benchmark name")
        parser.add_argument("plot", nargs="?", help="plot name (see --list)")
        parser.add_argument("--output", help="file to write: .svg or .png")
        parser.add_argument("--list", action="store_true", help="print the benchmark's plot names")

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = Benchmark.objects.filter(name=options["name"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {options['name']!r}")
        if options["list"]:
            self.stdout.write("\n".join(plot_names(benchmark)))
            return
        if not options["plot"] or not options["output"]:
            raise CommandError("give a plot name and --output FILE.svg or FILE.png (--list names the plots)")
        output = Path(options["output"])
        file_type = output.suffix.lstrip(".").lower()
        if file_type not in FILE_TYPES:
            raise CommandError(f"--output must end in .svg or .png, not {output.suffix or 'nothing'!r}")
        try:
            content, _ = plot_file(benchmark=benchmark, plot=options["plot"], file_type=file_type)
        except PlotError as error:
            raise CommandError(str(error)) from None
        try:
            output.write_bytes(content)
        except OSError as error:
            raise CommandError(f"cannot write {output}: {error}") from None
        self.stdout.write(self.style.SUCCESS(f"wrote {output} ({len(content)} bytes)"))
