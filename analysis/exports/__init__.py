"""Streaming exports of a benchmark: flat CSV tables of labels and candidates, statistics, and the
formats each scheme registers from its ``exports`` plug-in (``schemes.load_plugins``).

Every format is written row by row from server-side cursors (``QuerySet.iterator``), so memory
stays bounded by a chunk of rows whatever the size of the benchmark (docs/design.md §7). Sections that
need values from another table (a candidate row its
label counts) walk two streams sorted the same way side by side instead of building a lookup.

Only valid labels are exported (``annotation.selectors.valid_labels``), and only the candidates a
researcher did not exclude (``analysis.selectors.benchmark_candidates``). In the tables meant for
spreadsheets, cells a spreadsheet would run as formulas are neutralised (``crowdlex.spreadsheet``);
a release format (SWORDS JSON, ProLex CSV, Smart Word Suggestions JSON, the dataset folder's files)
keeps the text exact (docs/formats.md, "Exports").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from analysis.exports.answers import (
    ANSWER_COLUMNS,
    ANSWER_TEXT,
    answers_csv_batches,
    answers_jsonl_pieces,
    answers_size,
)
from analysis.exports.base import Progress, RowCounter, benchmark_worker_names
from analysis.exports.tables import (
    CANDIDATE_COLUMNS,
    LABEL_COLUMNS,
    LABEL_TEXT,
    candidate_batches,
    candidate_rows,
    csv_batch_pieces,
    csv_pieces,
    label_batches,
    label_rows,
)
from analysis.pseudonyms import WorkerNames
from analysis.selectors import benchmark_candidates, benchmark_valid_labels, scans_without_jit
from annotation.models import Benchmark
from schemes import get_scheme

LABELS_CSV = "labels-csv"
CANDIDATES_CSV = "candidates-csv"
#: Every submission as submitted, one row per annotator and item (``analysis.exports.answers``).
ANSWERS_CSV = "answers-csv"
ANSWERS_JSONL = "answers-jsonl"
STATS = "stats"
#: A folder of Parquet and JSONL files with a dataset card (``analysis.exports.dataset``); a zip as a file.
DATASET = "dataset"


# --- the registry of export formats ------------------------------------------------------------


@dataclass(frozen=True)
class ExportRequest:
    """What a format's writer gets: the benchmark, the row counter (progress), the builder of the
    statistics document (the ``stats`` format; ``analysis.services`` passes it in), how workers are
    named, and the split."""

    benchmark: Benchmark
    counter: RowCounter
    # Builds the statistics document, naming workers as ``workers`` does.
    statistics: Callable[[WorkerNames], dict[str, Any]]
    # How the export names workers: pseudonyms unless a researcher asked for raw ids.
    workers: WorkerNames
    # Only the targets of this split (None: all).
    split: str | None = None


@dataclass(frozen=True)
class ExportFormat:
    """A named export format: its file suffix, a title for the pages, the writer of its text in
    pieces, and the rows it writes (a cheap count, for progress). ``schemes`` names the schemes
    whose benchmarks it fits (None: every scheme), e.g. a scheme's released format; ``when`` asks
    the benchmark's scheme whether the format fits it (e.g. the label tables fit only a scheme
    whose answers are labels of candidates)."""

    name: str
    suffix: str
    title: str
    pieces: Callable[[ExportRequest], Iterator[str]]
    size: Callable[[Benchmark], int] = lambda benchmark: 1
    schemes: frozenset[str] | None = None
    when: Callable[[Benchmark], bool] | None = None

    def fits(self, benchmark: Benchmark) -> bool:
        if self.schemes is not None and benchmark.scheme not in self.schemes:
            return False
        return self.when is None or self.when(benchmark)


def judges_candidates(benchmark: Benchmark) -> bool:
    """Whether the benchmark's answers are labels of candidates (``AnnotationScheme.judges_candidates``)."""
    return get_scheme(benchmark).judges_candidates


def has_dataset_layout(benchmark: Benchmark) -> bool:
    """Whether the benchmark's scheme registered a dataset layout (``analysis.exports.dataset``)."""
    from analysis.exports.dataset import DATASET_LAYOUTS

    return benchmark.scheme in DATASET_LAYOUTS


_FORMATS: dict[str, ExportFormat] = {}


def register_export_format(export_format: ExportFormat) -> ExportFormat:
    """Offer ``export_format`` under its name (the schemes' formats register in ``analysis.apps``)."""
    _FORMATS[export_format.name] = export_format
    return export_format


def export_format(name: str) -> ExportFormat | None:
    return _FORMATS.get(name)


def export_formats(benchmark: Benchmark | None = None) -> list[ExportFormat]:
    """The registered formats in registration order; with ``benchmark``, those that fit its scheme."""
    return [found for found in _FORMATS.values() if benchmark is None or found.fits(benchmark)]


def export_format_names() -> list[str]:
    return list(_FORMATS)


def unknown_format(name: str, benchmark: Benchmark | None = None) -> str | None:
    """Why ``name`` cannot export ``benchmark`` (unknown, or not of its scheme), or None when it can."""
    found = export_format(name)
    if found is None:
        return f"unknown export format {name!r}; expected one of {', '.join(_FORMATS)}"
    if benchmark is not None and not found.fits(benchmark):
        fitting = ", ".join(candidate.name for candidate in export_formats(benchmark))
        return f"the {name} format does not export {benchmark.scheme} benchmarks; expected one of {fitting}"
    return None


def labels_size(benchmark: Benchmark) -> int:
    return benchmark_valid_labels(benchmark=benchmark).count()


def candidates_size(benchmark: Benchmark) -> int:
    return benchmark_candidates(benchmark=benchmark).count()


def _statistics_pieces(request: ExportRequest) -> Iterator[str]:
    yield json.dumps(request.statistics(request.workers), indent=2) + "\n"


def _not_a_stream(request: ExportRequest) -> Iterator[str]:
    raise ValueError("the dataset format is a folder of files, not a stream: write it to a folder or a zip")


register_export_format(
    ExportFormat(
        LABELS_CSV,
        ".csv",
        "labels, one row per label (CSV)",
        lambda request: csv_batch_pieces(
            LABEL_COLUMNS,
            label_batches(benchmark=request.benchmark, workers=request.workers, split=request.split),
            request.counter,
            text=LABEL_TEXT,
        ),
        labels_size,
        when=judges_candidates,
    )
)
register_export_format(
    ExportFormat(
        CANDIDATES_CSV,
        ".csv",
        "candidates with scores, one row per candidate (CSV)",
        lambda request: csv_batch_pieces(
            CANDIDATE_COLUMNS,
            candidate_batches(benchmark=request.benchmark, split=request.split, as_text=True),
            request.counter,
            # Neutralised as they are made, a distinct text at a time.
            text=(),
        ),
        candidates_size,
        when=judges_candidates,
    )
)
register_export_format(
    ExportFormat(
        ANSWERS_CSV,
        ".csv",
        "answers as submitted, one row per annotator and item, structured answers as JSON (CSV)",
        lambda request: csv_batch_pieces(
            ANSWER_COLUMNS,
            answers_csv_batches(benchmark=request.benchmark, workers=request.workers, split=request.split),
            request.counter,
            text=ANSWER_TEXT,
        ),
        answers_size,
    )
)
register_export_format(
    ExportFormat(
        ANSWERS_JSONL,
        ".jsonl",
        "answers as submitted, one object per annotator and item, structured answers exact (JSON Lines)",
        lambda request: answers_jsonl_pieces(
            benchmark=request.benchmark, workers=request.workers, counter=request.counter, split=request.split
        ),
        answers_size,
    )
)
register_export_format(
    ExportFormat(STATS, ".json", "statistics, agreement and figures of the scheme (JSON)", _statistics_pieces)
)
register_export_format(
    ExportFormat(
        DATASET,
        ".zip",
        "dataset folder: Parquet and JSONL per table and split, a dataset card, the released format",
        _not_a_stream,
        when=has_dataset_layout,
    )
)


# --- entry point -----------------------------------------------------------------------------


def export_pieces(
    *,
    benchmark: Benchmark,
    format: str,
    statistics: Callable[[WorkerNames], dict[str, Any]],
    progress: Progress | None = None,
    raw_workers: bool = False,
    split: str | None = None,
) -> Iterator[str]:
    """The text of one export format, in pieces of a row or an entry each.

    ``progress(done, total)`` is called every few thousand rows; ``statistics`` builds the
    document of the ``stats`` format, naming workers as it is given. Workers are pseudonymised
    unless ``raw_workers`` (for internal use: the caller marks and logs it). ``split`` keeps the
    targets of one split (the stats format's builder is given it by its caller).
    """
    problem = unknown_format(format, benchmark)
    if problem is not None:
        raise ValueError(problem)
    if format == DATASET:
        raise ValueError("the dataset format is a folder of files, not a stream: write it to a folder or a zip")
    chosen = _FORMATS[format]
    workers = benchmark_worker_names(benchmark=benchmark, raw_workers=raw_workers)
    with scans_without_jit():
        counter = RowCounter(chosen.size(benchmark) if progress else 0, progress)
        request = ExportRequest(
            benchmark=benchmark, counter=counter, statistics=statistics, workers=workers, split=split
        )
        yield from chosen.pieces(request)
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
    "ANSWERS_CSV",
    "ANSWERS_JSONL",
    "ANSWER_COLUMNS",
    "CANDIDATES_CSV",
    "CANDIDATE_COLUMNS",
    "DATASET",
    "LABELS_CSV",
    "LABEL_COLUMNS",
    "STATS",
    "ExportFormat",
    "ExportRequest",
    "Progress",
    "RowCounter",
    "WorkerNames",
    "batched_text",
    "benchmark_worker_names",
    "candidate_batches",
    "candidate_rows",
    "candidates_size",
    "csv_batch_pieces",
    "csv_pieces",
    "export_format",
    "export_format_names",
    "export_formats",
    "export_pieces",
    "label_batches",
    "label_rows",
    "labels_size",
    "register_export_format",
    "unknown_format",
]
