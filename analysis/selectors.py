"""Bulk reads for the analysis: a benchmark's candidates and valid labels as numpy arrays.

Everything counts valid labels only (``annotation.selectors.valid_labels``: imported ones and
those of non-filtered assignments), of the candidates a researcher did not exclude
(``benchmark_candidates``). Rows arrive in chunks from a server-side cursor and are
packed into integer arrays, so a 400k-label benchmark costs a few megabytes, not a list of
Python tuples.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt
from django.db import DatabaseError, connection
from django.db.models import Case, F, IntegerField, Min, Model, QuerySet, Sum, TextField, Value, When
from django.db.models.functions import Cast, Coalesce

from analysis.stats import source_group
from annotation.models import Benchmark, Candidate, CandidateStage, Context, Label, LabelValue, Target, Worker
from annotation.selectors import valid_labels
from schemes.swords.scores import ABSTAIN, ACCEPT, REJECT, count_table

# pandas is imported by the functions that use it: it takes about a second to import, which
# every command and web process paid at start-up (analysis registers its formats at start).
if TYPE_CHECKING:
    import pandas as pd

# Rows per round trip of a streamed query: enough to amortise the trip (375 trips for the labels
# of full SWORDS take well under 0.1 s), few enough that a chunk of rows stays near half a megabyte.
CHUNK_SIZE = 1000
IntArray = npt.NDArray[np.int64]


@contextmanager
def scans_without_jit() -> Iterator[None]:
    """Run the block with PostgreSQL's JIT compiler off.

    The analysis reads a benchmark in a few large scans; JIT compiles each of them for longer
    than it runs (at full SWORDS size, 1.1 s of a 1.6 s query). Off elsewhere than PostgreSQL.
    """
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SET jit = off")
    try:
        yield
    finally:
        try:
            with connection.cursor() as cursor:
                cursor.execute("RESET jit")
        except DatabaseError:
            # Inside a transaction that failed: its rollback undoes the SET anyway.
            pass


def value_code() -> Case:
    """The label value as ACCEPT / REJECT / ABSTAIN, computed in the database."""
    return Case(
        When(value=LabelValue.ACCEPT, then=Value(ACCEPT)),
        When(value=LabelValue.REJECT, then=Value(REJECT)),
        default=Value(ABSTAIN),
        output_field=IntegerField(),
    )


def collection_order() -> list[Any]:
    """A candidate's labels in the order they were collected: the order they were stored.

    The importer writes a file's labels in their order and an appended import after them, and
    submissions store labels as they arrive, so ids are the collection order. ``position`` is
    not: it restarts with each import origin.
    """
    return [F("id").asc()]


def reannotation_origin(benchmark: Benchmark) -> str | None:
    """The import origin a researcher marked as a re-annotation of the benchmark, if any."""
    analysis = benchmark.extra.get("analysis") if isinstance(benchmark.extra, dict) else None
    origin = analysis.get("reannotation_origin") if isinstance(analysis, dict) else None
    return origin if isinstance(origin, str) and origin else None


def import_origins(*, benchmark: Benchmark) -> list[str]:
    """Import origins of the benchmark's labels, in the order they were first stored."""
    rows = (
        Label.objects.filter(candidate__target__benchmark=benchmark, assignment__isnull=True)
        .order_by()
        .values("origin")
        .annotate(first=Min("id"))
        .order_by("first")
    )
    return [row["origin"] for row in rows]


def benchmark_candidates(*, benchmark: Benchmark, split: str | None = None) -> QuerySet[Candidate]:
    """The candidates results report: all but those a researcher excluded (docs/annotator.md), of
    the targets in ``split`` when one is named."""
    candidates = Candidate.objects.filter(target__benchmark=benchmark).exclude(stage=CandidateStage.EXCLUDED)
    return in_split(candidates, split, "target__")


def benchmark_valid_labels(*, benchmark: Benchmark, split: str | None = None) -> QuerySet[Label]:
    """Valid labels of the candidates results report (``benchmark_candidates``)."""
    labels = (
        valid_labels().filter(candidate__target__benchmark=benchmark).exclude(candidate__stage=CandidateStage.EXCLUDED)
    )
    return in_split(labels, split, "candidate__target__")


Rows = TypeVar("Rows", bound=Model)


def in_split(queryset: QuerySet[Rows], split: str | None, target: str) -> QuerySet[Rows]:
    """Rows of the targets in a split (``analysis.models.TargetSplit``; None: all), ``target``
    being the lookup path to the target ("" for targets, "target__" for candidates, ...)."""
    return queryset if split is None else queryset.filter(**{f"{target}split__name": split})


def stream_rows(queryset: QuerySet[Any]) -> Iterator[tuple[Any, ...]]:
    """The rows of a ``values_list`` queryset straight from a server-side cursor, a chunk at a time.

    Memory holds one chunk whatever the size of the result (``QuerySet.iterator`` does the same),
    and values come as the driver gives them: Django applies a converter to every value of an
    annotated expression, which on half a million labels alone takes seconds. Columns that
    need converting (JSON, dates) are cast to text in the query.
    """
    sql, params = queryset.query.sql_with_params()
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(CHUNK_SIZE):
            yield from rows


def _frame(queryset: QuerySet[Any], columns: dict[str, Any]) -> pd.DataFrame:
    """The queryset's rows as a DataFrame with the given column names and dtypes.

    On PostgreSQL the rows travel as CSV through COPY and pandas parses them in C, an order of
    magnitude faster than building a Python tuple per row. Values must not be NULL.
    """
    import pandas as pd

    names = list(columns)
    if connection.vendor == "postgresql":
        sql, params = queryset.query.sql_with_params()
        # The CSV goes to a temporary file, not memory: at ten times SWORDS it is 150 MB, which
        # would sit beside the frame parsed from it.
        with tempfile.TemporaryFile() as buffer:
            with connection.cursor() as cursor:
                raw = cursor.cursor
                query = raw.mogrify(sql, params).decode()
                raw.copy_expert(f"COPY ({query}) TO STDOUT WITH (FORMAT csv)", buffer)
            if buffer.tell() == 0:
                return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in columns.items()})
            buffer.seek(0)
            return pd.read_csv(buffer, header=None, names=names, dtype=columns, na_filter=False)
    frame = pd.DataFrame.from_records(list(stream_rows(queryset)), columns=names)
    return (
        frame.astype(columns)
        if len(frame)
        else pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in columns.items()})
    )


@dataclass
class CandidateTable:
    """One row per candidate (ordered by id) and one per target (ordered by id)."""

    contexts: int
    target_ids: IntArray
    target_pos: list[str]
    candidate_ids: IntArray
    candidate_target: IntArray  # row in target_ids
    source_group: list[str]
    counts: IntArray  # n x 3 valid (accept, reject, abstain) labels, filled from the labels

    def rows_of(self, candidate_ids: npt.ArrayLike) -> IntArray:
        """Row numbers of candidate ids (all must belong to the benchmark)."""
        ids = np.asarray(candidate_ids, dtype=np.int64)
        rows = np.searchsorted(self.candidate_ids, ids)
        if ids.size and (rows.max() >= self.candidate_ids.size or np.any(self.candidate_ids[rows] != ids)):
            raise ValueError("a candidate id does not belong to this benchmark")
        return rows.astype(np.int64)


def candidate_table(*, benchmark: Benchmark, split: str | None = None) -> CandidateTable:
    """Targets with their part of speech, candidates with their target and source group.

    ``counts`` is left at zero: ``label_arrays`` and ``count_table`` fill it from the labels.
    """
    targets = list(
        in_split(Target.objects.filter(benchmark=benchmark), split, "").order_by("id").values_list("id", "pos")
    )
    target_ids = np.array([row[0] for row in targets], dtype=np.int64)
    candidates = _frame(
        benchmark_candidates(benchmark=benchmark, split=split)
        .order_by("id")
        .values_list("id", "target_id", Cast("sources", TextField())),
        {"id": "int64", "target": "int64", "sources": "category"},
    )
    # Few distinct source lists exist: parse each once, and map them by the categorical's codes.
    sources = candidates["sources"].cat
    groups = np.asarray(
        [source_group(json.loads(text) if text else []) for text in sources.categories.astype(str)], dtype=object
    )
    ids = candidates["id"].to_numpy(dtype=np.int64)
    return CandidateTable(
        contexts=in_split(Context.objects.filter(benchmark=benchmark), split, "targets__").distinct().count(),
        target_ids=target_ids,
        target_pos=[row[1] for row in targets],
        candidate_ids=ids,
        candidate_target=np.searchsorted(target_ids, candidates["target"].to_numpy(dtype=np.int64)).astype(np.int64),
        source_group=groups[sources.codes.to_numpy()].tolist() if groups.size else [],
        counts=np.zeros((ids.size, 3), dtype=np.int64),
    )


@dataclass
class LabelArrays:
    """One row per valid label, sorted by candidate row and collection order.

    ``origin`` numbers the import origin of each label in ``origins`` (-1 for a label collected
    here); ``origins`` lists them in the order their first label was stored.
    """

    candidate_row: IntArray
    worker_row: IntArray  # row in worker_ids, -1 for a label naming no worker
    value: IntArray
    worker_ids: IntArray
    origin: IntArray
    origins: list[str]

    def __len__(self) -> int:
        return int(self.value.size)

    def count_table(self, n_candidates: int) -> IntArray:
        """Per-candidate (accept, reject, abstain) counts."""
        return count_table(self.candidate_row, self.value, n_candidates)

    def select(self, mask: npt.NDArray[np.bool_]) -> LabelArrays:
        return replace(
            self,
            candidate_row=self.candidate_row[mask],
            worker_row=self.worker_row[mask],
            value=self.value[mask],
            origin=self.origin[mask],
        )


def label_arrays(*, benchmark: Benchmark, table: CandidateTable, split: str | None = None) -> LabelArrays:
    """All valid labels of the benchmark in one scan, collected and imported alike."""
    collected = Case(When(assignment__isnull=True, then=Value(0)), default=Value(1), output_field=IntegerField())
    columns = {"candidate": "int64", "worker": "int64", "value": "int8", "collected": "int8", "id": "int64"}
    frame = _frame(
        benchmark_valid_labels(benchmark=benchmark, split=split)
        .order_by()
        .values_list("candidate_id", Coalesce("worker_id", Value(-1)), value_code(), collected, "id", "origin"),
        {**columns, "origin": "category"},
    )
    # Collection order (see collection_order) within each candidate, sorted here rather than by the database.
    order = np.lexsort((frame["id"].to_numpy(), frame["candidate"].to_numpy()))
    workers = frame["worker"].to_numpy()[order]
    worker_ids, worker_rows = np.unique(workers[workers >= 0], return_inverse=True)
    worker_row = np.full(workers.size, -1, dtype=np.int64)
    worker_row[workers >= 0] = worker_rows.ravel()

    # Import origins, numbered by their first label (collected labels have none).
    imported = frame["collected"].to_numpy() == 0
    # The categorical's codes number the origins already: no sort of a string per label.
    origin_column = frame["origin"].cat
    names = np.asarray(origin_column.categories.astype(str), dtype=object)
    codes = origin_column.codes.to_numpy().astype(np.int64)
    ids = frame["id"].to_numpy()
    first_id = np.full(names.size, np.iinfo(np.int64).max)
    np.minimum.at(first_id, codes[imported], ids[imported])
    ranked = [int(code) for code in np.argsort(first_id) if first_id[code] != np.iinfo(np.int64).max]
    renumber = np.full(names.size, -1, dtype=np.int64)
    renumber[ranked] = np.arange(len(ranked))
    origin = np.where(imported, renumber[codes], -1)[order]
    return LabelArrays(
        candidate_row=table.rows_of(frame["candidate"].to_numpy()[order]),
        worker_row=worker_row,
        value=frame["value"].to_numpy()[order].astype(np.int64),
        worker_ids=worker_ids.astype(np.int64),
        origin=origin.astype(np.int64),
        origins=[str(names[code]) for code in ranked],
    )


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


def filtered_label_arrays(*, benchmark: Benchmark, table: CandidateTable) -> tuple[IntArray, IntArray, IntArray]:
    """(candidate row, worker id, value code) of every label whose assignment spam filtering took
    out, on the candidates of ``table`` (excluded candidates and other splits left out)."""
    rows = np.array(
        Label.objects.filter(candidate__target__benchmark=benchmark, assignment__filtered=True, worker__isnull=False)
        .order_by()
        .values_list("candidate_id", "worker_id", value_code()),
        dtype=np.int64,
    ).reshape(-1, 3)
    known = np.isin(rows[:, 0], table.candidate_ids)
    rows = rows[known]
    return table.rows_of(rows[:, 0]), rows[:, 1], rows[:, 2]
