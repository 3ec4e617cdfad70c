"""Bulk reads for the analysis: a benchmark's candidates and valid labels as numpy arrays.

Everything counts valid labels only (``annotation.selectors.valid_labels``: imported ones and
those of non-filtered assignments). Rows arrive in chunks from a server-side cursor and are
packed into integer arrays, so a 400k-label benchmark costs a few megabytes, not a list of
Python tuples.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

import numpy as np
import numpy.typing as npt
from django.db.models import Case, Count, F, IntegerField, Min, Q, QuerySet, Sum, Value, When
from django.db.models.functions import Coalesce

from analysis.scores import ABSTAIN, ACCEPT, REJECT
from analysis.stats import source_group
from annotation.models import Benchmark, Candidate, Context, Label, LabelValue, Target, Worker
from annotation.selectors import valid_labels

CHUNK_SIZE = 5000
IntArray = npt.NDArray[np.int64]


def value_code() -> Case:
    """The label value as ACCEPT / REJECT / ABSTAIN, computed in the database."""
    return Case(
        When(value=LabelValue.ACCEPT, then=Value(ACCEPT)),
        When(value=LabelValue.REJECT, then=Value(REJECT)),
        default=Value(ABSTAIN),
        output_field=IntegerField(),
    )


def collection_order() -> list[Any]:
    """Labels of a candidate in the order they were collected: imported ones first, by position, then by id."""
    collected = Case(When(assignment__isnull=True, then=Value(0)), default=Value(1), output_field=IntegerField())
    return [collected.asc(), F("position").asc(), F("id").asc()]


def benchmark_valid_labels(*, benchmark: Benchmark) -> QuerySet[Label]:
    return valid_labels().filter(candidate__target__benchmark=benchmark)


def _int_arrays(rows: Iterator[tuple[int, ...]], width: int) -> list[IntArray]:
    """Pack integer rows into one array per column, a chunk at a time."""
    chunks: list[IntArray] = []
    while batch := list(islice(rows, CHUNK_SIZE)):
        chunks.append(np.array(batch, dtype=np.int64).reshape(-1, width))
    table = np.concatenate(chunks) if chunks else np.zeros((0, width), dtype=np.int64)
    return [np.ascontiguousarray(table[:, column]) for column in range(width)]


@dataclass
class CandidateTable:
    """One row per candidate (ordered by id) and one per target (ordered by id)."""

    contexts: int
    target_ids: IntArray
    target_pos: list[str]
    candidate_ids: IntArray
    candidate_target: IntArray  # row in target_ids
    counts: IntArray  # n x 3 valid (accept, reject, abstain) labels
    source_group: list[str]

    def rows_of(self, candidate_ids: npt.ArrayLike) -> IntArray:
        """Row numbers of candidate ids (all must belong to the benchmark)."""
        ids = np.asarray(candidate_ids, dtype=np.int64)
        rows = np.searchsorted(self.candidate_ids, ids)
        if ids.size and (rows.max() >= self.candidate_ids.size or np.any(self.candidate_ids[rows] != ids)):
            raise ValueError("a candidate id does not belong to this benchmark")
        return rows.astype(np.int64)


def candidate_table(*, benchmark: Benchmark) -> CandidateTable:
    """Candidates with their valid label counts, targets with their part of speech."""
    targets = list(Target.objects.filter(benchmark=benchmark).order_by("id").values_list("id", "pos"))
    target_ids = np.array([row[0] for row in targets], dtype=np.int64)
    candidate_ids: list[int] = []
    candidate_targets: list[int] = []
    groups: list[str] = []
    rows = (
        Candidate.objects.filter(target__benchmark=benchmark)
        .order_by("id")
        .values_list("id", "target_id", "sources")
        .iterator(chunk_size=CHUNK_SIZE)
    )
    group_cache: dict[tuple[str, ...], str] = {}
    for candidate_id, target_id, sources in rows:
        candidate_ids.append(candidate_id)
        candidate_targets.append(target_id)
        key = tuple(sources or ())
        if key not in group_cache:
            group_cache[key] = source_group(key)
        groups.append(group_cache[key])
    ids = np.array(candidate_ids, dtype=np.int64)
    table = CandidateTable(
        contexts=Context.objects.filter(benchmark=benchmark).count(),
        target_ids=target_ids,
        target_pos=[row[1] for row in targets],
        candidate_ids=ids,
        candidate_target=np.searchsorted(target_ids, np.array(candidate_targets, dtype=np.int64)).astype(np.int64),
        counts=np.zeros((ids.size, 3), dtype=np.int64),
        source_group=groups,
    )
    counted = (
        benchmark_valid_labels(benchmark=benchmark)
        .order_by()
        .values("candidate_id")
        .annotate(
            accepts=Count("id", filter=Q(value=LabelValue.ACCEPT)),
            rejects=Count("id", filter=Q(value=LabelValue.REJECT)),
            abstains=Count("id", filter=Q(value=LabelValue.ABSTAIN)),
        )
        .values_list("candidate_id", "accepts", "rejects", "abstains")
        .iterator(chunk_size=CHUNK_SIZE)
    )
    label_candidates, accepts, rejects, abstains = _int_arrays(counted, 4)
    rows_of = table.rows_of(label_candidates)
    table.counts[rows_of] = np.stack([accepts, rejects, abstains], axis=1)
    return table


@dataclass
class LabelArrays:
    """One row per valid label, in collection order within each candidate."""

    candidate_row: IntArray
    worker_row: IntArray  # row in worker_ids, -1 for a label naming no worker
    value: IntArray
    worker_ids: IntArray

    def __len__(self) -> int:
        return int(self.value.size)


def label_arrays(
    *,
    benchmark: Benchmark,
    table: CandidateTable,
    origin: str | None = None,
    exclude_origin: str | None = None,
) -> LabelArrays:
    """The benchmark's valid labels, optionally only or all but those of one import ``origin``."""
    queryset = benchmark_valid_labels(benchmark=benchmark)
    if origin is not None:
        queryset = queryset.filter(origin=origin, assignment__isnull=True)
    if exclude_origin is not None:
        queryset = queryset.exclude(Q(origin=exclude_origin) & Q(assignment__isnull=True))
    rows = (
        queryset.annotate(code=value_code(), worker_or_none=Coalesce("worker_id", Value(-1)))
        .order_by("candidate_id", *collection_order())
        .values_list("candidate_id", "worker_or_none", "code")
        .iterator(chunk_size=CHUNK_SIZE)
    )
    candidate_ids, workers, values = _int_arrays(rows, 3)
    worker_ids, worker_rows = np.unique(workers[workers >= 0], return_inverse=True)
    worker_row = np.full(workers.size, -1, dtype=np.int64)
    worker_row[workers >= 0] = worker_rows
    return LabelArrays(
        candidate_row=table.rows_of(candidate_ids),
        worker_row=worker_row,
        value=values,
        worker_ids=worker_ids.astype(np.int64),
    )


def import_origins(*, benchmark: Benchmark) -> list[str]:
    """Import origins of the benchmark's labels, in the order they were first stored."""
    first_ids = (
        Label.objects.filter(candidate__target__benchmark=benchmark, assignment__isnull=True)
        .order_by()
        .values("origin")
        .annotate(first=Min("id"))
        .order_by("first")
    )
    return [row["origin"] for row in first_ids]


def worker_names(worker_ids: Sequence[int]) -> dict[int, str]:
    return {
        pk: f"{kind}:{external_id}"
        for pk, kind, external_id in Worker.objects.filter(pk__in=list(worker_ids)).values_list(
            "id", "kind", "external_id"
        )
    }


def worker_control_accuracy(*, benchmark: Benchmark) -> dict[int, tuple[int, int]]:
    """Each worker's (correct, total) control answers over their submitted work in the benchmark (DESIGN §5)."""
    from hits.models import Assignment, AssignmentStatus

    rows = (
        Assignment.objects.filter(
            hit__batch__benchmark=benchmark,
            status__in=[AssignmentStatus.SUBMITTED, AssignmentStatus.APPROVED, AssignmentStatus.REJECTED],
        )
        .order_by()
        .values("worker_id")
        .annotate(correct=Sum("controls_correct"), total=Sum("controls_total"))
    )
    return {row["worker_id"]: (int(row["correct"] or 0), int(row["total"] or 0)) for row in rows}
