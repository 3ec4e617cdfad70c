"""The flat tables of a benchmark: one CSV row per valid label, one per candidate (docs/design.md §7)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from typing import Any, Protocol

from django.db.models import Count, Q, TextField
from django.db.models.functions import Cast, Coalesce

from analysis.exports.base import RowCounter, benchmark_label_set
from analysis.exports.fits import export_fits
from analysis.pseudonyms import WorkerNames
from analysis.selectors import (
    benchmark_candidates,
    benchmark_valid_labels,
    collection_order,
    reannotation_origin,
    stream_batches,
    stream_rows,
)
from annotation.models import Benchmark, LabelValue
from crowdlex.spreadsheet import SpreadsheetSafeWriter, formula_cells, spreadsheet_safe_chunks
from review.adjudication import candidate_overrides, overrides_applied
from schemes.scores import DEFAULT_THRESHOLDS, ScoreThresholds, category_of, override_score

LABEL_COLUMNS: tuple[str, ...] = (
    "label_id",
    "candidate_id",
    "candidate_external_id",
    "candidate",
    "target_id",
    "target",
    "context_id",
    "worker",
    "assignment_id",
    "step",
    "value",
    "raw_value",
    "origin",
    "position",
    "time",
)
CANDIDATE_COLUMNS: tuple[str, ...] = (
    "candidate_id",
    "candidate_external_id",
    "target_id",
    "target_external_id",
    "target",
    "pos",
    "context_id",
    "text",
    "sources",
    "stage",
    "score",
    "accepts",
    "rejects",
    "abstains",
    "labels",
    "category",
    # Worker-aware posteriors P(acceptable) beside the score, never instead of it (docs/design.md §13).
    "posterior_dawid_skene",
    "posterior_mace",
    # A researcher's decision and its reason (docs/design.md §17); blank where there is none.
    "override",
    "override_reason",
)
#: Separator of the sources inside one CSV cell (source names never contain it).
SOURCE_SEPARATOR = ";"
# Rows per CSV piece, and per fetch of the rows it is written from: the csv module's buffer holds
# four bytes a character, and a batch's rows are held as the driver's tuples and as lists.
CSV_BATCH = 500


# The columns of each table that may hold text a spreadsheet would run as a formula (every column
# that may hold text the platform's code did not write): the others hold numbers, None, words of
# the code's own (a stage, a category, a decision, a label's value), a time the database wrote, or
# a worker named by a pseudonym or by its kind first (``csv_batch_pieces``).
LABEL_TEXT = tuple(
    LABEL_COLUMNS.index(name) for name in ("candidate_external_id", "candidate", "target", "raw_value", "origin")
)
CANDIDATE_TEXT = tuple(
    CANDIDATE_COLUMNS.index(name)
    for name in (
        "candidate_external_id",
        "target_external_id",
        "target",
        "pos",
        "text",
        "sources",
        "override_reason",
    )
)


def label_batches(*, benchmark: Benchmark, workers: WorkerNames, split: str | None = None) -> Iterator[list[list[Any]]]:
    """The rows of ``label_rows`` (LABEL_COLUMNS), a fetch at a time, each row a list: one statement
    read through a server-side cursor, a batch built by one comprehension."""
    batches = stream_batches(
        benchmark_valid_labels(benchmark=benchmark, split=split)
        # The database writes the timestamp (UTC, ISO 8601 with a space): far cheaper than datetimes.
        .annotate(time=Cast(Coalesce("assignment__submitted_at", "created_at"), TextField()))
        .order_by("candidate__target_id", "candidate_id", *collection_order())
        .values_list(
            "id",
            "candidate_id",
            "candidate__external_id",
            "candidate__text",
            "candidate__target_id",
            "candidate__target__word",
            "candidate__target__context_id",
            "worker__kind",
            "worker__external_id",
            "assignment_id",
            "step",
            "value",
            "raw_value",
            "origin",
            "position",
            "time",
        ),
        CSV_BATCH,
    )
    for batch in batches:
        yield [[*row[:7], workers(f"{row[7]}:{row[8]}" if row[7] is not None else None), *row[9:]] for row in batch]


def label_rows(*, benchmark: Benchmark, workers: WorkerNames, split: str | None = None) -> Iterator[tuple[Any, ...]]:
    """One tuple per valid label (LABEL_COLUMNS), by target, candidate and collection order.

    The worker is named by ``workers`` (a pseudonym unless raw ids were asked for); a label
    without a worker, as imported SWORDS labels are, has none.
    """
    for batch in label_batches(benchmark=benchmark, workers=workers, split=split):
        yield from map(tuple, batch)


def _candidate_counts(benchmark: Benchmark, split: str | None) -> Iterator[tuple[int, int, int, int, int]]:
    """(target id, candidate id, accepts, rejects, abstains) of candidates with valid labels, in that order."""
    return stream_rows(
        benchmark_label_set(benchmark, split)
        .order_by()
        .values("candidate__target_id", "candidate_id")
        .annotate(
            accepts=Count("id", filter=Q(value=LabelValue.ACCEPT)),
            rejects=Count("id", filter=Q(value=LabelValue.REJECT)),
            abstains=Count("id", filter=Q(value=LabelValue.ABSTAIN)),
        )
        .order_by("candidate__target_id", "candidate_id")
        .values_list("candidate__target_id", "candidate_id", "accepts", "rejects", "abstains")
    )


class _JoinedSources:
    """Sources JSON text as ``a;b``, parsed once per distinct text (a benchmark has a handful)."""

    def __init__(self) -> None:
        self.cache: dict[str | None, str] = {None: "", "": ""}

    def __call__(self, text: str | None) -> str:
        if not text:
            return ""
        joined = self.cache.get(text)
        if joined is None:
            joined = SOURCE_SEPARATOR.join(json.loads(text))
            if len(self.cache) < 4096:
                self.cache[text] = joined
        return joined


_NO_DECISION = ("", "")
# The candidate's own columns a row starts with, then its tallied counts where they are read with it.
_CANDIDATE_FIELDS = (
    "id",
    "external_id",
    "target_id",
    "target__external_id",
    "target__word",
    "target__pos",
    "target__context_id",
    "text",
    Cast("sources", TextField()),
    "stage",
)
_TALLY_FIELDS = ("tally__accepts", "tally__rejects", "tally__abstains")
# The fetched columns that may hold text a spreadsheet would run: CANDIDATE_TEXT but the sources
# (column 8, joined from their JSON) and the reason (the last, which the decisions give).
_FETCHED_TEXT = tuple(index for index in CANDIDATE_TEXT if index < CANDIDATE_COLUMNS.index("sources"))


def candidate_batches(
    *,
    benchmark: Benchmark,
    thresholds: ScoreThresholds = DEFAULT_THRESHOLDS,
    split: str | None = None,
    as_text: bool = False,
) -> Iterator[list[list[Any]]]:
    """The rows of ``candidate_rows`` (CANDIDATE_COLUMNS), a fetch at a time, each row a list.

    A candidate's counts are its tallies (``CandidateTally``: its valid labels by value), read in
    the candidates' one statement; while a re-annotation is marked, whose labels the tallies count
    and the table leaves out, they are the valid labels grouped by candidate instead, a second
    stream in the same order. The posteriors are the fits kept per change (``analysis.exports.fits``).

    ``as_text`` gives the rows as the CSV export writes them: the computed columns (score to
    posteriors) as the text ``csv.writer`` writes of them, and the text columns (CANDIDATE_TEXT)
    neutralised as ``crowdlex.spreadsheet.spreadsheet_safe`` neutralises them, each formatted or
    checked once for each distinct value of a batch rather than once a row (docs/design.md §7,
    "Whole CSV downloads").
    """
    # Read before the rows stream, so that their transient memory is gone when the label arrays load.
    decisions = candidate_overrides(benchmark=benchmark)
    # The score and category follow a decision only where the benchmark applies them (docs/design.md §17).
    applied = overrides_applied(benchmark=benchmark)
    fits = export_fits(benchmark=benchmark, split=split)
    tallied = reannotation_origin(benchmark) is None
    candidates = stream_batches(
        benchmark_candidates(benchmark=benchmark, split=split)
        .order_by("target_id", "id")
        .values_list(*_CANDIDATE_FIELDS, *(_TALLY_FIELDS if tallied else ())),
        CSV_BATCH,
    )
    grouped = None if tallied else _grouped_counts(_candidate_counts(benchmark, split))
    posteriors = fits.posterior_texts if as_text else fits.posteriors_of
    joined = _JoinedSources()
    # A candidate's score, counts and category follow from its counts alone (and a decision where
    # one is applied): computed, and formatted, once for each distinct counts of the download. The
    # key is the tally's three cells as read (None where no label) or the grouped counts, with the
    # decision beside them where one is applied.
    scored: dict[Any, tuple[Any, ...]] = {}
    for batch in candidates:
        # Column by column: each column of the fetched rows a tuple, each computed column built from
        # the distinct values it takes, the rows put together by one ``zip``.
        columns: list[Sequence[Any]] = list(zip(*batch, strict=True))
        if not columns:
            continue
        ids = columns[0]
        firsts, seconds = posteriors(ids)
        keys: list[Any] = list(zip(*columns[10:13], strict=True)) if grouped is None else list(grouped(batch))
        made: Sequence[str]
        reasons: Sequence[str]
        if decisions:
            decided = [decisions.get(pk, _NO_DECISION) for pk in ids]
            made, reasons = zip(*decided, strict=True)
            if applied:
                keys = [(key, decision) if decision else key for key, decision in zip(keys, made, strict=True)]
        else:
            made = reasons = ("",) * len(ids)
        for key in set(keys).difference(scored):
            count, decision = key if len(key) == 2 else (key, "")
            scored[key] = _scored(
                count, override_score(decision, thresholds) if decision else None, thresholds, as_text
            )
        figures = zip(*map(scored.__getitem__, keys), strict=True)
        sources = {text: joined(text) for text in set(columns[8])}
        if as_text:
            # Each distinct text checked once: a batch repeats a target's word, its part of speech,
            # the sources, and empty cells.
            for index in _FETCHED_TEXT:
                columns[index] = _safe(columns[index])
            running = formula_cells(set(sources.values()))
            if running:
                sources = {text: running.get(joined, joined) for text, joined in sources.items()}
            reasons = _safe(reasons)
        yield list(
            map(
                list,
                zip(
                    *columns[:8],
                    map(sources.__getitem__, columns[8]),
                    columns[9],
                    *figures,
                    firsts,
                    seconds,
                    made,
                    reasons,
                    strict=True,
                ),
            )
        )


def _safe(column: Sequence[Any]) -> Sequence[Any]:
    """The column with each cell that would run as a formula neutralised (``crowdlex.spreadsheet``)."""
    running = formula_cells(set(column))
    return [running.get(cell, cell) for cell in column] if running else column


def _scored(
    count: tuple[int | None, ...], decided: float | None, thresholds: ScoreThresholds, as_text: bool
) -> tuple[Any, ...]:
    """(score, accepts, rejects, abstains, labels, category) of a candidate with ``count`` (accepts,
    rejects, abstains; None for no label), its score ``decided`` where a researcher's decision sets
    it; ``as_text``: each as ``csv.writer`` writes it."""
    accepts, rejects, abstains = (value or 0 for value in count)
    labels = accepts + rejects + abstains
    score = decided if decided is not None else accepts / labels if labels else None
    figures = (score, accepts, rejects, abstains, labels, category_of(score, thresholds))
    return tuple(map(csv_text, figures)) if as_text else figures


def csv_text(value: Any) -> str:
    """A cell as ``csv.writer`` writes it: None empty, anything else by ``str`` (a float's shortest
    text, -0.0 with its sign)."""
    return "" if value is None else str(value)


def _grouped_counts(
    counts: Iterator[tuple[int, int, int, int, int]],
) -> Callable[[list[tuple[Any, ...]]], Iterator[tuple[int, int, int]]]:
    """Each candidate's (accepts, rejects, abstains) from ``counts``, sorted as the candidates are."""
    pending = next(counts, None)

    def counted(batch: list[tuple[Any, ...]]) -> Iterator[tuple[int, int, int]]:
        nonlocal pending
        for row in batch:
            key = (row[2], row[0])
            # Counts are sorted as candidates are; skip any of a candidate created after the first query.
            while pending is not None and (pending[0], pending[1]) < key:
                pending = next(counts, None)
            if pending is not None and (pending[0], pending[1]) == key:
                yield pending[2], pending[3], pending[4]
                pending = next(counts, None)
            else:
                yield 0, 0, 0

    return counted


def candidate_rows(
    *, benchmark: Benchmark, thresholds: ScoreThresholds = DEFAULT_THRESHOLDS, split: str | None = None
) -> Iterator[tuple[Any, ...]]:
    """One tuple per candidate (CANDIDATE_COLUMNS) with its score and category, by target then id."""
    for batch in candidate_batches(benchmark=benchmark, thresholds=thresholds, split=split):
        yield from map(tuple, batch)


class _RowWriter(Protocol):
    def writerow(self, row: Iterable[Any], /) -> Any: ...

    def writerows(self, rows: Iterable[Iterable[Any]], /) -> None: ...


def csv_pieces(
    columns: Iterable[str], rows: Iterable[Sequence[Any]], counter: RowCounter, *, neutralise: bool = True
) -> Iterator[str]:
    """A header line, then the rows a chunk at a time. A table meant for spreadsheets has its formula
    cells neutralised (``crowdlex.spreadsheet``); a release format (``neutralise=False``) keeps every
    cell exactly as the release writes it (docs/formats.md, "Exports")."""
    buffer = io.StringIO()
    writer: _RowWriter = (
        SpreadsheetSafeWriter(buffer, lineterminator="\n") if neutralise else csv.writer(buffer, lineterminator="\n")
    )
    writer.writerow(columns)
    rows = iter(rows)
    while True:
        # Rows go straight into the chunk's text: a chunk holds its text, never its row tuples.
        written = 0
        for row in islice(rows, CSV_BATCH):
            writer.writerow(row)
            written += 1
        counter.tick(written)
        yield buffer.getvalue()
        if not written:
            return
        buffer.seek(0)
        buffer.truncate()


def csv_batch_pieces(
    columns: Sequence[str], batches: Iterable[list[list[Any]]], counter: RowCounter, *, text: Sequence[int]
) -> Iterator[str]:
    """What ``csv_pieces`` writes for the rows of ``batches`` (a table meant for spreadsheets): the
    header's line, then one piece per batch, formatted together (one ``writerows``) rather than a
    row at a time (``crowdlex.spreadsheet.spreadsheet_safe_chunks``, lines ended by a newline as
    ``csv_pieces`` ends them). The cells of the columns ``text`` are text or None and are
    neutralised as ``crowdlex.spreadsheet.spreadsheet_safe`` neutralises them; the other columns hold
    numbers or None, which it leaves as they are (docs/design.md §7, "Whole CSV downloads")."""

    def counted() -> Iterator[list[list[Any]]]:
        for rows in batches:
            counter.tick(len(rows))
            yield rows

    return spreadsheet_safe_chunks(columns, counted(), text=text, lineterminator="\n")
