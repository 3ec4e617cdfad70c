"""The registry of import formats, found by name (``benchmark_import(fmt=...)``).

Our JSONL and CSV formats are registered here; a scheme adds its own released formats from its
package with
:func:`register_import_format`, so the import service, the command, the API and the upload page
offer them without naming them. A format turns a decompressed binary stream into target records
(``annotation.importers.records``) that the one writer stores.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from annotation.importers.records import TargetRecord
from annotation.importers.report import ImportReport


@dataclass
class ParsedFile:
    """What a format makes of a file: its records in file order and what the import keeps besides.

    ``total`` is the number of records when known in advance (for progress); ``facts`` are
    file-level facts an export needs back, kept in ``Benchmark.extra[<format name>]``; ``finish``
    adds what only the whole walk over the records knows to the report (SWORDS id mismatches).
    """

    records: Iterable[TargetRecord]
    total: int | None = None
    facts: dict[str, Any] | None = None
    finish: Callable[[ImportReport], None] | None = field(default=None, repr=False)


@dataclass(frozen=True)
class ImportFormat:
    """A named import format: ``parse(stream, file)`` reads one file (``file`` names it in errors).

    ``scheme`` names the annotation scheme whose benchmarks the format fills ("" for any): a
    benchmark the import creates takes that scheme, and a benchmark of another scheme is refused.
    ``sniff`` tells the format from the first bytes of a file (the byte-order mark and leading
    blank space stripped) when the import is asked to find the format itself (``auto``); a format
    without it is used only when named.
    """

    name: str
    title: str
    parse: Callable[[io.BufferedIOBase, str], ParsedFile]
    scheme: str = ""
    sniff: Callable[[bytes], bool] | None = None


_FORMATS: dict[str, ImportFormat] = {}


def register_import_format(import_format: ImportFormat) -> ImportFormat:
    """Offer ``import_format`` under its name; registering a name twice replaces the first."""
    _FORMATS[import_format.name] = import_format
    return import_format


def import_format(name: str) -> ImportFormat | None:
    return _FORMATS.get(name)


def import_formats() -> list[ImportFormat]:
    """The registered formats: those any benchmark takes first, then those of one scheme, each in
    the order they were registered (not the order the schemes' packages happen to be imported in)."""
    return sorted(_FORMATS.values(), key=lambda found: bool(found.scheme))


def import_format_names() -> list[str]:
    return [found.name for found in import_formats()]
