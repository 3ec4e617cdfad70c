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
from analysis.pseudonyms import WorkerNames
from analysis.selectors import (
    benchmark_candidates,
    benchmark_valid_labels,
    collection_order,
    stream_rows,
)
from annotation.models import Benchmark, LabelValue
from crowdlex.spreadsheet import SpreadsheetSafeWriter
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
# Rows per CSV piece: the csv module's buffer holds four bytes a character.
CSV_BATCH = 500


def label_rows(*, benchmark: Benchmark, workers: WorkerNames, split: str | None = None) -> Iterator[tuple[Any, ...]]:
    """One tuple per valid label (LABEL_COLUMNS), by target, candidate and collection order.

    The worker is named by ``workers`` (a pseudonym unless raw ids were asked for); a label
    without a worker, as imported SWORDS labels are, has none.
    """
    rows = stream_rows(
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
        )
    )
    for row in rows:
        yield (*row[:7], workers(f"{row[7]}:{row[8]}" if row[7] is not None else None), *row[9:])


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
        self.cache: dict[str, str] = {}

    def __call__(self, text: str | None) -> str:
        if not text:
            return ""
        joined = self.cache.get(text)
        if joined is None:
            joined = SOURCE_SEPARATOR.join(json.loads(text))
            if len(self.cache) < 4096:
                self.cache[text] = joined
        return joined


def candidate_rows(
    *, benchmark: Benchmark, thresholds: ScoreThresholds = DEFAULT_THRESHOLDS, split: str | None = None
) -> Iterator[tuple[Any, ...]]:
    """One tuple per candidate (CANDIDATE_COLUMNS) with its score and category, by target then id."""
    # Read before the rows stream, so that their transient memory is gone when the label arrays load.
    decisions = candidate_overrides(benchmark=benchmark)
    # The score and category follow a decision only where the benchmark applies them (docs/design.md §17).
    applied = overrides_applied(benchmark=benchmark)
    candidates = stream_rows(
        benchmark_candidates(benchmark=benchmark, split=split)
        .order_by("target_id", "id")
        .values_list(
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
    )
    counts = _candidate_counts(benchmark, split)
    posteriors = _posteriors(benchmark, split)
    joined = _JoinedSources()
    pending = next(counts, None)
    for row in candidates:
        key = (row[2], row[0])
        # Counts are sorted as candidates are; skip any of a candidate created after the first query.
        while pending is not None and (pending[0], pending[1]) < key:
            pending = next(counts, None)
        accepts = rejects = abstains = 0
        if pending is not None and (pending[0], pending[1]) == key:
            accepts, rejects, abstains = pending[2:]
            pending = next(counts, None)
        labels = accepts + rejects + abstains
        score = accepts / labels if labels else None
        decision, reason = decisions.get(row[0], ("", ""))
        if applied and decision:
            score = override_score(decision, thresholds)
        yield (
            *row[:8],
            joined(row[8]),
            row[9],
            score,
            accepts,
            rejects,
            abstains,
            labels,
            category_of(score, thresholds),
            *posteriors(row[0]),
            decision,
            reason,
        )


def _posteriors(benchmark: Benchmark, split: str | None) -> Callable[[int], tuple[float | None, float | None]]:
    """Each candidate's Dawid-Skene and MACE posteriors, rounded for the table."""
    from analysis.services.aggregation import posterior_lookup

    lookup = posterior_lookup(benchmark=benchmark, split=split)

    def rounded(candidate_id: int) -> tuple[float | None, float | None]:
        first, second = lookup(candidate_id)
        return (None if first is None else round(first, 6), None if second is None else round(second, 6))

    return rounded


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
