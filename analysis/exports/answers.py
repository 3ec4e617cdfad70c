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
from analysis.pseudonyms import WorkerNames
from analysis.selectors import in_split, stream_rows
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


def answer_rows(*, benchmark: Benchmark, workers: WorkerNames, split: str | None = None) -> Iterator[dict[str, Any]]:
    """One dict per answer (ANSWER_COLUMNS), by assignment and item position; ``data`` is the
    structured answer as a Python value (None for a plain choice)."""
    confirmed_q = confirmed("assignment__")
    rows = stream_rows(
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
    reliability = _worker_reliability(benchmark, split)
    for row in rows:
        field = dict(zip(_FIELDS, row, strict=True))
        dawid_skene, mace = reliability.get(field["assignment__worker_id"], (None, None))
        kind, external_id = field["assignment__worker__kind"], field["assignment__worker__external_id"]
        candidate_id = field["item__candidate_id"]
        data_text = field["data_text"]
        yield {
            "benchmark": benchmark.name,
            "batch_id": field["assignment__hit__batch_id"],
            "step": field["assignment__hit__batch__step"],
            "hit_id": field["assignment__hit_id"],
            "assignment_id": field["assignment_id"],
            "worker": workers(f"{kind}:{external_id}"),
            "worker_kind": kind,
            "target_id": field["assignment__hit__target_id"],
            "target_external_id": field["assignment__hit__target__external_id"],
            "target": field["assignment__hit__target__word"],
            "context_id": field["assignment__hit__target__context_id"],
            "context_external_id": field["assignment__hit__target__context__external_id"],
            "item_id": field["item_id"],
            "item_position": field["item__position"],
            "item_kind": field["item__kind"],
            "control": field["item__control"],
            "candidate_id": candidate_id,
            # An item's text is its candidate's (or the distractor's) for a row about a candidate;
            # for a target or a sentence as the item there is no candidate.
            "candidate": field["item__text"] if candidate_id is not None or field["item__control"] else None,
            "value": field["value"],
            "data": json.loads(data_text) if data_text is not None else None,
            "counts": counts(
                status=field["assignment__status"],
                filtered=field["assignment__filtered"],
                is_confirmed=field["is_confirmed"],
            ),
            "status": field["assignment__status"],
            "submitted_at": field["submitted_text"],
            "seconds_on_page": field["assignment__seconds_on_page"],
            "worker_reliability_dawid_skene": dawid_skene,
            "worker_reliability_mace": mace,
        }


def _worker_reliability(benchmark: Benchmark, split: str | None) -> dict[int, tuple[float, float]]:
    """Worker id to (Dawid-Skene, MACE) reliability over the valid labels (of ``split``); a
    benchmark has far fewer workers than labels, so a dict is small."""
    from analysis.aggregation import DAWID_SKENE, MACE
    from analysis.services.aggregation import benchmark_aggregation
    from analysis.services.reports import benchmark_data

    data = benchmark_data(benchmark=benchmark, split=split)
    fits = [benchmark_aggregation(benchmark=benchmark, method=method, data=data) for method in (DAWID_SKENE, MACE)]
    return {
        int(worker): (round(float(first), 6), round(float(second), 6))
        for worker, first, second in zip(fits[0].worker_ids, fits[0].reliability, fits[1].reliability, strict=True)
    }


def _flag(condition: Q) -> Case:
    return Case(When(condition, then=Value(True)), default=Value(False), output_field=BooleanField())


def answers_csv_rows(*, benchmark: Benchmark, workers: WorkerNames, split: str | None = None) -> Iterator[list[Any]]:
    """The rows of the CSV: the structured answer as compact JSON text, empty when there is none."""
    for row in answer_rows(benchmark=benchmark, workers=workers, split=split):
        data = row["data"]
        row["data"] = "" if data is None else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        yield [row[column] for column in ANSWER_COLUMNS]


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
