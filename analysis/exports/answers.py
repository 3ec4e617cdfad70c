"""Every submission as it was submitted, for every scheme: one row per annotator and item.

The labels export keeps what counts; this one keeps what was handed in, the raw material of an
analysis that looks at each annotator's view (a perspectivist one): every answer of every submitted
assignment (submitted, approved or rejected), controls included, with whether its assignment counts
(``valid``), was filtered as spam (``filtered``), is crowd work no sync has confirmed yet
(``unconfirmed``) or was rejected (``rejected``). A structured answer (marked spans with
suggestions and types, proposed substitutes) is kept whole as JSON beside its short value.

Rows come from a server-side cursor by assignment and item, so memory holds a chunk of them
whatever the size of the benchmark. The CSV neutralises cells a spreadsheet would run as formulas;
the JSONL keeps every text and the structured answer exact.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.db.models import BooleanField, Case, Q, QuerySet, TextField, Value, When
from django.db.models.functions import Cast

from analysis.exports.base import RowCounter
from analysis.exports.fits import export_fits
from analysis.pseudonyms import WorkerNames
from analysis.selectors import in_split, stream_batches
from annotation.models import Benchmark
from hits.models import SUBMITTED_STATUSES, VALID_STATUSES, Answer, AssignmentStatus, confirmed

ANSWER_COLUMNS: tuple[str, ...] = (
    "benchmark",
    "batch_id",
    "step",
    "hit_id",
    "assignment_id",
    "worker",
    "worker_kind",
    "target_id",
    "target_external_id",
    "target",
    "context_id",
    "context_external_id",
    "item_id",
    "item_position",
    "item_kind",
    "control",
    "candidate_id",
    "candidate",
    "value",
    "data",
    "counts",
    "status",
    "submitted_at",
    "seconds_on_page",
    # The worker's reliability under each model fitted to the valid labels (docs/design.md §13);
    # empty for a worker with no valid label (filtered, rejected or not yet confirmed work only).
    "worker_reliability_dawid_skene",
    "worker_reliability_mace",
)

# The columns that may hold text a spreadsheet would run as a formula: every column but those that
# hold only numbers, yes/no or None (``analysis.exports.tables.csv_batch_pieces``).
_NUMBERS = {
    "batch_id",
    "step",
    "hit_id",
    "assignment_id",
    "target_id",
    "context_id",
    "item_id",
    "item_position",
    "control",
    "candidate_id",
    "seconds_on_page",
    "worker_reliability_dawid_skene",
    "worker_reliability_mace",
}
ANSWER_TEXT = tuple(index for index, name in enumerate(ANSWER_COLUMNS) if name not in _NUMBERS)
# Where ``data`` sits in a row.
_DATA = ANSWER_COLUMNS.index("data")
_NO_RELIABILITY = (None, None)

#: Whether an assignment's answers count, in the order the export decides it.
VALID, FILTERED, UNCONFIRMED, REJECTED = "valid", "filtered", "unconfirmed", "rejected"

# Where each row's fields come from, in ANSWER_COLUMNS' order (the worker and ``counts`` are
# computed from the fields after them).
_FIELDS = (
    "assignment__hit__batch_id",
    "assignment__hit__batch__step",
    "assignment__hit_id",
    "assignment_id",
    "assignment__worker__kind",
    "assignment__worker__external_id",
    "assignment__hit__target_id",
    "assignment__hit__target__external_id",
    "assignment__hit__target__word",
    "assignment__hit__target__context_id",
    "assignment__hit__target__context__external_id",
    "item_id",
    "item__position",
    "item__kind",
    "item__control",
    "item__candidate_id",
    "item__text",
    "value",
    "data_text",
    "assignment__status",
    "assignment__filtered",
    "is_confirmed",
    "submitted_text",
    "assignment__seconds_on_page",
    "assignment__worker_id",
)


def submitted_answers(*, benchmark: Benchmark, split: str | None = None) -> QuerySet[Answer]:
    """Every answer of the benchmark's submitted assignments (the targets of ``split`` only, when named)."""
    answers = Answer.objects.filter(
        assignment__hit__batch__benchmark=benchmark, assignment__status__in=SUBMITTED_STATUSES
    )
    return in_split(answers, split, "assignment__hit__target__")


def answers_size(benchmark: Benchmark) -> int:
    return submitted_answers(benchmark=benchmark).count()


def counts(*, status: str, filtered: bool, is_confirmed: bool) -> str:
    """Whether an assignment's answers count (``VALID``) and, when not, why."""
    if status == AssignmentStatus.REJECTED:
        return REJECTED
    if filtered:
        return FILTERED
    if not is_confirmed:
        return UNCONFIRMED
    assert status in VALID_STATUSES
    return VALID


def _answer_batches(
    *, benchmark: Benchmark, workers: WorkerNames, split: str | None = None
) -> Iterator[list[list[Any]]]:
    """The answers' rows (ANSWER_COLUMNS), a fetch at a time, each row a list with ``data`` as the
    stored JSON's text (None for a plain choice): one statement read through a server-side cursor
    (``_FIELDS``), the workers' reliabilities from the fits kept per change (``analysis.exports.fits``)."""
    confirmed_q = confirmed("assignment__")
    batches = stream_batches(
        submitted_answers(benchmark=benchmark, split=split)
        # The database writes JSON and the timestamp (UTC, ISO 8601) as text: no converter per value.
        .annotate(
            data_text=Cast("data", TextField()),
            submitted_text=Cast("assignment__submitted_at", TextField()),
            is_confirmed=_flag(confirmed_q),
        )
        .order_by("assignment_id", "item__position", "item_id")
        .values_list(*_FIELDS)
    )
    reliability = export_fits(benchmark=benchmark, split=split).reliability_by_worker()
    name = benchmark.name
    for batch in batches:
        yield [
            [
                name,
                *row[:4],
                workers(f"{row[4]}:{row[5]}"),
                row[4],
                *row[6:16],
                # An item's text is its candidate's (or the distractor's) for a row about a candidate;
                # for a target or a sentence as the item there is no candidate.
                row[16] if row[15] is not None or row[14] else None,
                row[17],
                row[18],
                counts(status=row[19], filtered=row[20], is_confirmed=row[21]),
                row[19],
                row[22],
                row[23],
                *reliability.get(row[24], _NO_RELIABILITY),
            ]
            for row in batch
        ]


def answer_rows(*, benchmark: Benchmark, workers: WorkerNames, split: str | None = None) -> Iterator[dict[str, Any]]:
    """One dict per answer (ANSWER_COLUMNS), by assignment and item position; ``data`` is the
    structured answer as a Python value (None for a plain choice)."""
    for batch in _answer_batches(benchmark=benchmark, workers=workers, split=split):
        for row in batch:
            data_text = row[_DATA]
            row[_DATA] = json.loads(data_text) if data_text is not None else None
            yield dict(zip(ANSWER_COLUMNS, row, strict=True))


def _flag(condition: Q) -> Case:
    return Case(When(condition, then=Value(True)), default=Value(False), output_field=BooleanField())


def answers_csv_batches(
    *, benchmark: Benchmark, workers: WorkerNames, split: str | None = None
) -> Iterator[list[list[Any]]]:
    """The rows of the CSV, a batch at a time: the structured answer as compact JSON text, empty
    when there is none."""
    for batch in _answer_batches(benchmark=benchmark, workers=workers, split=split):
        for row in batch:
            data_text = row[_DATA]
            data = json.loads(data_text) if data_text is not None else None
            row[_DATA] = "" if data is None else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        yield batch


def answers_jsonl_pieces(
    *, benchmark: Benchmark, workers: WorkerNames, counter: RowCounter, split: str | None = None
) -> Iterator[str]:
    """One JSON object a line (ANSWER_COLUMNS as keys), texts and structured answers exact."""
    lines: list[str] = []
    for row in answer_rows(benchmark=benchmark, workers=workers, split=split):
        lines.append(json.dumps(row, ensure_ascii=False) + "\n")
        if len(lines) == 500:
            counter.tick(len(lines))
            yield "".join(lines)
            lines = []
    counter.tick(len(lines))
    yield "".join(lines)
