"""python manage.py import_benchmark PATH --benchmark NAME [--format auto|FORMAT] [--origin NAME]
[--new-label-set] [--json]"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from annotation.importers import auto_format_help, import_format_names
from annotation.services import ImportFailed, benchmark_import


class Command(BaseCommand):
    help = (
        "Import contexts, targets, candidates and labels from our JSONL or CSV format or a format a scheme "
        "registers (gzipped or not) into a benchmark, creating it if needed. All or nothing; importing "
        "again changes nothing. Labels of candidates that another origin labelled are refused unless --new-label-set."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="file to import (docs/formats.md)")
        parser.add_argument("--benchmark", required=True, help="benchmark name (a slug); created if missing")
        parser.add_argument(
            "--format",
            default="auto",
            choices=["auto", *import_format_names()],
            help=f"default: auto ({auto_format_help()})",
        )
        parser.add_argument("--origin", help="name the imported labels are kept under (default: the file name)")
        parser.add_argument(
            "--new-label-set",
            action="store_true",
            help="the labels are a new annotation of candidates that another origin labelled (a re-annotation), "
            "not the same labels again",
        )
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        bar: tqdm[Any] | None = None

        def progress(done: int, total: int | None) -> None:
            nonlocal bar
            if bar is None:
                bar = tqdm(total=total, unit="target", file=sys.stderr, leave=False)
            bar.update(done - bar.n)

        try:
            report = benchmark_import(
                path_or_file=options["path"],
                benchmark_name=options["benchmark"],
                fmt=options["format"],
                origin=options["origin"],
                new_label_set=options["new_label_set"],
                # A progress bar only where someone watches: not in logs or pipes.
                progress=progress if sys.stderr.isatty() else None,
            )
        except ImportFailed as exc:
            raise CommandError(str(exc)) from exc
        finally:
            if bar is not None:
                bar.close()
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(), indent=2))
        else:
            self.stdout.write(report.summary())
