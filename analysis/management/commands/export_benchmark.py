"""python manage.py export_benchmark NAME --format FORMAT --output PATH [--split S] [--raw-worker-ids]"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser, OutputWrapper

from analysis.exports import DATASET, export_format_names, unknown_format
from analysis.services import (
    LICENSES_HINT,
    benchmark_dataset_write,
    benchmark_export,
    benchmark_export_to_path,
    license_check,
    split_check,
)
from annotation.models import Benchmark
from crowdlex.progress import progress_bar


class _Unterminated:
    """Writes pieces to a command's output as they are, without the newline it adds to each."""

    def __init__(self, out: OutputWrapper) -> None:
        self.out = out

    def write(self, text: str) -> int:
        self.out.write(text, ending="")
        return len(text)


class Command(BaseCommand):
    help = (
        "Export a benchmark in one of the formats its scheme offers (a CSV of labels or of candidates, its "
        "statistics as JSON, the scheme's released formats), or as a dataset folder (Parquet and JSONL per "
        "table and split, a dataset card, the released format; PATH a folder). "
        "Written as a stream in bounded memory; gzip-compressed when PATH ends in .gz; '-' writes to stdout. "
        "Workers are pseudonymised per benchmark unless --raw-worker-ids."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="benchmark name")
        parser.add_argument("--format", required=True, choices=export_format_names())
        parser.add_argument("--output", required=True, help="file to write (.gz: compressed), or - for stdout")
        parser.add_argument("--split", help="only the targets of this split (benchmark_split)")
        parser.add_argument("--license", default="unknown", help=f"the dataset format's license: {LICENSES_HINT}")
        parser.add_argument(
            "--raw-worker-ids",
            action="store_true",
            help="worker ids instead of pseudonyms, for internal use only (logged; a file name must say so)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = Benchmark.objects.filter(name=options["name"]).first()
        if benchmark is None:
            raise CommandError(f"no benchmark named {options['name']!r}")
        problem = unknown_format(options["format"], benchmark)
        if problem is not None:
            raise CommandError(problem)
        raw, split = options["raw_worker_ids"], options["split"]
        if options["output"] != "-":
            # Written where it was pointed, never into folders made on the way.
            folder = Path(options["output"]).absolute().parent
            if not folder.is_dir():
                raise CommandError(f"the folder {folder} does not exist: create it first, or give another --output")
        if options["format"] == DATASET:
            self._dataset(benchmark, Path(options["output"]), options["license"], raw=raw, split=split)
            return
        try:
            split_check(benchmark=benchmark, split=split)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if options["output"] == "-":
            # The file goes to stdout: the bar, on stderr, stays out of it.
            with progress_bar(self.stderr, desc=f"exporting {options['format']}", unit="row") as progress:
                benchmark_export(
                    benchmark=benchmark,
                    format=options["format"],
                    out=_Unterminated(self.stdout),
                    raw_workers=raw,
                    split=split,
                    progress=progress,
                )
            return
        if raw and "raw-worker-ids" not in Path(options["output"]).name:
            raise CommandError("a file with raw worker ids must say so: put 'raw-worker-ids' in its name")
        try:
            with progress_bar(self.stderr, desc=f"exporting {options['format']}", unit="row") as progress:
                path = benchmark_export_to_path(
                    benchmark=benchmark,
                    format=options["format"],
                    path=options["output"],
                    raw_workers=raw,
                    split=split,
                    progress=progress,
                )
        except OSError as exc:
            raise CommandError(f"cannot write {options['output']}: {exc}") from exc
        self.stdout.write(self.style.SUCCESS(f"wrote {path} ({path.stat().st_size} bytes)"))

    def _dataset(self, benchmark: Benchmark, directory: Path, license: str, *, raw: bool, split: str | None) -> None:
        if raw or split is not None:
            raise CommandError("the dataset folder holds every split and never raw worker ids")
        try:
            license_check(license)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        try:
            with progress_bar(self.stderr, desc="writing the dataset", unit="file") as progress:
                folder = benchmark_dataset_write(
                    benchmark=benchmark, directory=directory, license=license, progress=progress
                )
        except (OSError, ValueError) as exc:
            raise CommandError(f"cannot write {directory}: {exc}") from exc
        self.stdout.write(self.style.SUCCESS(f"wrote {folder.path}: {len(folder.files)} files"))
