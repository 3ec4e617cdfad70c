"""Streaming exports of a benchmark: SWORDS JSON, flat CSV tables of labels and candidates, statistics.

Every format is written row by row from server-side cursors (``QuerySet.iterator``), so memory
stays bounded by a chunk of rows whatever the size of the benchmark (DESIGN §7). Sections that
need values from another table (a substitute needs its target's SWORDS id, a candidate row its
label counts) walk two streams sorted the same way side by side instead of building a lookup.

Only valid labels are exported (``annotation.selectors.valid_labels``), and only the candidates a
researcher did not exclude (``analysis.selectors.benchmark_candidates``). CSV cells a spreadsheet
would run as formulas are neutralised (``crowdlex.spreadsheet``); the JSON formats keep the text
exact.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from analysis.exports.base import Counter, Progress
from analysis.exports.swords_json import swords_pieces
from analysis.exports.tables import CANDIDATE_COLUMNS, LABEL_COLUMNS, candidate_rows, csv_pieces, label_rows
from analysis.selectors import benchmark_candidates, benchmark_valid_labels, scans_without_jit
from annotation.models import Benchmark, Context, Target

SWORDS = "swords"
LABELS_CSV = "labels-csv"
CANDIDATES_CSV = "candidates-csv"
STATS = "stats"
#: Export formats and the file suffix of each.
FORMATS: dict[str, str] = {SWORDS: ".json", LABELS_CSV: ".csv", CANDIDATES_CSV: ".csv", STATS: ".json"}


def export_size(*, benchmark: Benchmark, format: str) -> int:
    """Rows an export will write, for progress: cheap counts."""
    labels = benchmark_valid_labels(benchmark=benchmark).count()
    if format == LABELS_CSV:
        return labels
    candidates = benchmark_candidates(benchmark=benchmark).count()
    if format == CANDIDATES_CSV:
        return candidates
    if format == SWORDS:
        contexts = Context.objects.filter(benchmark=benchmark).count()
        targets = Target.objects.filter(benchmark=benchmark).count()
        return contexts + targets + candidates + labels
    return 1


def export_pieces(
    *,
    benchmark: Benchmark,
    format: str,
    progress: Progress | None = None,
    statistics: Callable[[], dict[str, Any]] | None = None,
) -> Iterator[str]:
    """The text of one export format, in pieces of a row or an entry each.

    ``progress(done, total)`` is called every few thousand rows; ``statistics`` builds the
    document of the ``stats`` format.
    """
    if format not in FORMATS:
        raise ValueError(f"unknown export format {format!r}; expected one of {', '.join(FORMATS)}")
    if format == STATS and statistics is None:
        raise ValueError("the stats format needs a statistics builder")
    with scans_without_jit():
        counter = Counter(export_size(benchmark=benchmark, format=format) if progress else 0, progress)
        if format == LABELS_CSV:
            yield from csv_pieces(LABEL_COLUMNS, label_rows(benchmark=benchmark), counter)
        elif format == CANDIDATES_CSV:
            yield from csv_pieces(CANDIDATE_COLUMNS, candidate_rows(benchmark=benchmark), counter)
        elif format == SWORDS:
            yield from swords_pieces(benchmark=benchmark, counter=counter)
        elif statistics is not None:
            yield json.dumps(statistics(), indent=2) + "\n"
        counter.finish()


def batched_text(pieces: Iterable[str], size: int = 64 * 1024) -> Iterator[str]:
    """Join small pieces into chunks of about ``size`` characters (fewer writes, fewer HTTP chunks)."""
    buffer: list[str] = []
    length = 0
    for piece in pieces:
        buffer.append(piece)
        length += len(piece)
        if length >= size:
            yield "".join(buffer)
            buffer, length = [], 0
    if buffer:
        yield "".join(buffer)


__all__ = [
    "CANDIDATES_CSV",
    "CANDIDATE_COLUMNS",
    "FORMATS",
    "LABELS_CSV",
    "LABEL_COLUMNS",
    "STATS",
    "SWORDS",
    "Progress",
    "batched_text",
    "candidate_rows",
    "export_pieces",
    "export_size",
    "label_rows",
]
