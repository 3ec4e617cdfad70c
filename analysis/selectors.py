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
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from itertools import islice
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt
from django.db import connection
from django.db.models import Case, F, IntegerField, Min, Model, Q, QuerySet, Sum, TextField, Value, When
from django.db.models.functions import Cast, Coalesce

from analysis.slices import label_slices, slice_rows
from analysis.stats import source_group
from annotation.changes import benchmark_kept
from annotation.models import (
    Benchmark,
    Candidate,
    CandidateStage,
    CandidateTally,
    Context,
    Label,
    LabelValue,
    Target,
    Worker,
)
from annotation.selectors import valid_labels
from crowdlex.dialect import dialect
from schemes import get_scheme
from schemes.base import scheme_qualification
from schemes.scores import ABSTAIN, ACCEPT, REJECT, count_table

# pandas is imported by the functions that use it: it takes about a second to import, which
# every command and web process paid at start-up (analysis registers its formats at start).
if TYPE_CHECKING:
    import pandas as pd

# Rows per round trip of a streamed query: enough to amortise the trip (375 trips for the labels
# of full SWORDS take well under 0.1 s), few enough that a chunk of rows stays near half a megabyte.
CHUNK_SIZE = 1000
IntArray = npt.NDArray[np.int64]
# Candidate and worker rows, value codes and origin numbers of labels, as narrow as they fit.
RowArray = npt.NDArray[np.int32]
CodeArray = npt.NDArray[np.int8]
OriginArray = npt.NDArray[np.signedinteger[Any]]


@contextmanager
def scans_without_jit() -> Iterator[None]:
    """Run the block with PostgreSQL's JIT compiler off.

    The analysis reads a benchmark in a few large scans; JIT compiles each of them for longer
    than it runs (at full SWORDS size, 1.1 s of a 1.6 s query). Nothing to turn off elsewhere
    (``crowdlex.dialect``).
    """
    with dialect().scans_without_jit():
        yield


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
    """Valid labels of the candidates results report (``benchmark_candidates``).

    Read by the label's own benchmark, the few excluded candidates' labels left out, rather than
    through each label's candidate and target: at ten times SWORDS that join of 2.5 M labels with
    457,050 candidates took half of the scan agreement reads after every change naming every target
    (docs/benchmarks.md, the warm task's second round at ten times SWORDS: agreement's scan)."""
    excluded = Candidate.objects.filter(target__benchmark=benchmark, stage=CandidateStage.EXCLUDED).values("pk")
    labels = valid_labels().filter(benchmark=benchmark).exclude(candidate_id__in=excluded)
    return in_split(labels, split, "candidate__target__")


def benchmark_valid_label_count(*, benchmark: Benchmark) -> int:
    """How many labels ``benchmark_valid_labels`` holds, summed from each target's candidates'
    tallies (``CandidateTally.labels``: the valid labels, kept by every writer) and kept per target
    (``annotation.changes.benchmark_kept``): after a submit, a refresh's filtering or an exclusion
    only the targets it changed are summed again, where a count of the benchmark's valid labels read
    them all (2.5 M at ten times SWORDS, a second, after every change; docs/design.md §7,
    "Incremental figures")."""
    return benchmark_kept(
        benchmark_id=benchmark.pk,
        name="valid-labels",
        compute=lambda target_ids: _valid_labels_by_target(benchmark, target_ids),
        summarise=_summed,
        combine=_summed,
        take=lambda total, figures: total - _summed(figures),
    ).total


def _summed(counts: Iterable[int]) -> int:
    return sum(counts)


def _valid_labels_by_target(benchmark: Benchmark, target_ids: list[int] | None) -> dict[int, int]:
    tallies = CandidateTally.objects.filter(candidate__target__benchmark=benchmark).exclude(
        candidate__stage=CandidateStage.EXCLUDED
    )
    if target_ids is not None:
        tallies = tallies.filter(candidate__target_id__in=target_ids)
    by_target = tallies.values("candidate__target_id").annotate(n=Sum("labels")).order_by()
    return {target_id: n for target_id, n in by_target.values_list("candidate__target_id", "n") if n}


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


def stream_batches(queryset: QuerySet[Any], size: int = CHUNK_SIZE) -> Iterator[list[tuple[Any, ...]]]:
    """The rows of a ``values_list`` queryset as ``stream_rows`` reads them, a fetch of ``size`` rows
    at a time as one list: for a caller that formats a batch together (the CSV exports), never a
    row at a time."""
    sql, params = queryset.query.sql_with_params()
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(size):
            yield rows


def _frames(queryset: QuerySet[Any], columns: dict[str, Any], *, rows: int) -> Iterator[pd.DataFrame]:
    """The queryset's rows as DataFrames with the given column names and dtypes, of at most
    ``rows`` rows each; none when there are no rows. A caller that packs each
    frame into narrower arrays never holds the whole result as 64-bit columns.

    On PostgreSQL the rows travel as CSV through COPY and pandas parses them in C, an order of
    magnitude faster than building a Python tuple per row. Values must not be NULL.
    """
    import pandas as pd

    names = list(columns)
    if dialect().bulk_copy:
        sql, params = queryset.query.sql_with_params()
        # The CSV goes to a temporary file, not memory: at ten times SWORDS it is 150 MB, which
        # would sit beside the frame parsed from it.
        with tempfile.TemporaryFile() as buffer:
            dialect().copy_out_csv(sql, params, buffer)
            if buffer.tell() == 0:
                return
            buffer.seek(0)
            with pd.read_csv(
                buffer, header=None, names=names, dtype=columns, na_filter=False, chunksize=rows
            ) as reader:
                yield from reader
        return
    streamed = stream_rows(queryset)
    while True:
        chunk = list(islice(streamed, rows))
        if not chunk:
            return
        yield pd.DataFrame.from_records(chunk, columns=names).astype(columns)


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
    frames = _frames(
        benchmark_candidates(benchmark=benchmark, split=split)
        .order_by("id")
        .values_list("id", "target_id", Cast("sources", TextField())),
        {"id": "int64", "target": "int64", "sources": "category"},
        rows=slice_rows(),
    )
    # A slice at a time: the text of each candidate's sources is a string object until the
    # categorical is made, which for every candidate at once would take tens of megabytes.
    id_parts: list[IntArray] = [np.zeros(0, dtype=np.int64)]
    target_parts: list[IntArray] = [np.zeros(0, dtype=np.int64)]
    source_groups: list[str] = []
    # Few distinct source lists exist: parse each once, and map them by the categorical's codes.
    group_of: dict[str, str] = {}
    for frame in frames:
        sources = frame["sources"].cat
        groups = np.asarray(
            [
                group_of.setdefault(text, source_group(json.loads(text) if text else []))
                for text in sources.categories.astype(str)
            ],
            dtype=object,
        )
        id_parts.append(frame["id"].to_numpy(dtype=np.int64, copy=True))
        target_parts.append(np.searchsorted(target_ids, frame["target"].to_numpy(dtype=np.int64)).astype(np.int64))
        if groups.size:
            source_groups.extend(groups[sources.codes.to_numpy()].tolist())
        del frame, sources
    ids = np.concatenate(id_parts)
    return CandidateTable(
        contexts=in_split(Context.objects.filter(benchmark=benchmark), split, "targets__").distinct().count(),
        target_ids=target_ids,
        target_pos=[row[1] for row in targets],
        candidate_ids=ids,
        candidate_target=np.concatenate(target_parts),
        source_group=source_groups,
        counts=np.zeros((ids.size, 3), dtype=np.int64),
    )


@dataclass
class LabelArrays:
    """One row per valid label, sorted by candidate row and collection order.

    ``origin`` numbers the import origin of each label in ``origins`` (-1 for a label collected
    here); ``origins`` lists them in the order their first label was stored. The columns are as
    narrow as their values allow (ten bytes a label rather than thirty-two): at ten times SWORDS,
    3.76 million labels, they take 38 MB.
    """

    candidate_row: RowArray
    worker_row: RowArray  # row in worker_ids, -1 for a label naming no worker
    value: CodeArray
    worker_ids: IntArray
    origin: OriginArray
    origins: list[str]

    def __len__(self) -> int:
        return int(self.value.size)

    def count_table(self, n_candidates: int) -> IntArray:
        """Per-candidate (accept, reject, abstain) counts, summed a slice of labels at a time so
        that no 64-bit copy of a whole column is made."""
        counts = np.zeros((n_candidates, 3), dtype=np.int64)
        for part in label_slices(len(self)):
            rows = self.candidate_row[part].astype(np.int64)
            # Sorted by candidate: a slice covers a narrow band of the table.
            low, high = int(rows.min()), int(rows.max()) + 1
            if low < 0 or high > n_candidates:
                raise ValueError("candidate index out of range")
            counts[low:high] += count_table(rows - low, self.value[part], high - low)
        return counts

    def select(self, mask: npt.NDArray[np.bool_]) -> LabelArrays:
        return replace(
            self,
            candidate_row=self.candidate_row[mask],
            worker_row=self.worker_row[mask],
            value=self.value[mask],
            origin=self.origin[mask],
        )


def label_arrays(*, benchmark: Benchmark, table: CandidateTable, split: str | None = None) -> LabelArrays:
    """All valid labels of the benchmark in one scan, collected and imported alike.

    The rows are parsed a slice at a time (``LABEL_SLICE``) and packed into narrow columns as they
    come, so memory never holds a frame of 64-bit columns beside its sort. A candidate's labels
    keep their collection order (``collection_order``). The scan gives each candidate's labels
    by id almost always (its hash join may shuffle candidates, not the labels of one): that is
    checked on the way, and a counting sort by candidate then groups them, writing each column
    once into its place. Otherwise they are sorted by (candidate, id).
    """
    collected = Case(When(assignment__isnull=True, then=Value(0)), default=Value(1), output_field=IntegerField())
    columns = {"candidate": "int64", "worker": "int64", "value": "int8", "collected": "int8", "id": "int64"}
    frames = _frames(
        benchmark_valid_labels(benchmark=benchmark, split=split)
        .order_by()
        .values_list("candidate_id", Coalesce("worker_id", Value(-1)), value_code(), collected, "id", "origin"),
        {**columns, "origin": "category"},
        rows=slice_rows(),
    )
    n_candidates = table.candidate_ids.size
    parts: list[_LabelSlice] = []
    seen_workers: list[IntArray] = []
    # Import origins by name, numbered as met, with the id of each one's first label.
    origin_codes: dict[str, int] = {}
    first_ids = np.zeros(0, dtype=np.int64)
    # The id of each candidate's last label so far: are its labels coming by id?
    last_id = np.full(n_candidates, -1, dtype=np.int64)
    by_id = True
    for frame in frames:
        rows = table.rows_of(frame["candidate"].to_numpy())
        ids = frame["id"].to_numpy()
        if by_id:
            by_id = _in_id_order(rows, ids, last_id)
        workers = frame["worker"].to_numpy()
        seen_workers.append(np.unique(workers[workers >= 0]))
        # The categorical's codes number this slice's origins: no string per label is kept.
        origin_column = frame["origin"].cat
        local = [origin_codes.setdefault(str(name), len(origin_codes)) for name in origin_column.categories]
        imported = frame["collected"].to_numpy() == 0
        codes = np.full(rows.size, -1, dtype=np.int64)
        if local:
            codes[imported] = np.asarray(local, dtype=np.int64)[origin_column.codes.to_numpy()[imported]]
        first_ids = np.r_[first_ids, np.full(len(origin_codes) - first_ids.size, np.iinfo(np.int64).max)]
        np.minimum.at(first_ids, codes[imported], ids[imported])
        parts.append(
            _LabelSlice(
                candidate=rows.astype(np.int32),
                worker=workers.astype(_narrowest(workers)),
                value=frame["value"].to_numpy().astype(np.int8),
                origin=codes.astype(_narrowest(codes)),
                # Kept for a sort by id should the scan not give them by id: 32 bits while they fit.
                id=ids.astype(_narrowest(ids)),
            )
        )
        del frame, rows, ids, workers, codes, imported

    worker_ids = np.unique(np.concatenate(seen_workers)) if seen_workers else np.zeros(0, dtype=np.int64)
    # Origins numbered by their first label, as import_origins orders them.
    ranked = [int(code) for code in np.argsort(first_ids, kind="stable") if first_ids[code] != np.iinfo(np.int64).max]
    origin_type = np.int8 if len(ranked) < np.iinfo(np.int8).max else np.int32
    renumber = np.full(len(origin_codes) + 1, -1, dtype=origin_type)
    renumber[np.asarray(ranked, dtype=np.int64) + 1] = np.arange(len(ranked))
    names = {code: name for name, code in origin_codes.items()}

    size = sum(part.value.size for part in parts)
    candidate_row = np.empty(size, dtype=np.int32)
    worker_row = np.empty(size, dtype=np.int32)
    value = np.empty(size, dtype=np.int8)
    origin: OriginArray = np.empty(size, dtype=origin_type)
    if by_id:
        # Counting sort: each candidate's labels start after those of the candidates before it
        # and follow in the order they came, which is their ids' order.
        filled = np.zeros(n_candidates, dtype=np.int64)
        for part in parts:
            filled += np.bincount(part.candidate, minlength=n_candidates)
        filled = np.cumsum(filled) - filled
    else:
        ids = np.empty(size, dtype=np.int64)
    start = 0
    while parts:
        part = parts.pop(0)
        if by_id:
            place = _places(part.candidate, filled)
        else:
            place = np.arange(start, start + part.value.size)
            ids[place] = part.id
        candidate_row[place] = part.candidate
        rows = np.full(part.worker.size, -1, dtype=np.int32)
        known = part.worker >= 0
        rows[known] = np.searchsorted(worker_ids, part.worker[known])
        worker_row[place] = rows
        value[place] = part.value
        origin[place] = renumber[part.origin.astype(np.int64) + 1]
        start += part.value.size
        del part, place, rows, known
    if not by_id:
        order = np.lexsort((ids, candidate_row))
        del ids
        candidate_row, worker_row, value, origin = candidate_row[order], worker_row[order], value[order], origin[order]
    return LabelArrays(
        candidate_row=candidate_row,
        worker_row=worker_row,
        value=value,
        worker_ids=worker_ids.astype(np.int64),
        origin=origin,
        origins=[names[code] for code in ranked],
    )


@dataclass
class _LabelSlice:
    """One parsed slice of labels, packed narrow, in the order the scan gave them."""

    candidate: RowArray
    worker: npt.NDArray[np.integer[Any]]  # worker id, -1 for none
    value: CodeArray
    origin: npt.NDArray[np.integer[Any]]  # number of the origin as met, -1 for a collected label
    id: npt.NDArray[np.integer[Any]]


def _narrowest(values: IntArray) -> type[np.integer[Any]]:
    """int8 or int32 if every value fits, else int64."""
    low, high = (int(values.min()), int(values.max())) if values.size else (0, 0)
    for kind in (np.int8, np.int32):
        if np.iinfo(kind).min <= low and high <= np.iinfo(kind).max:
            return kind
    return np.int64


def _in_id_order(rows: IntArray, ids: IntArray, last_id: IntArray) -> bool:
    """Whether this slice's labels of each candidate come by increasing id, after those of the
    slices before (``last_id`` holds each candidate's last id so far, and is brought up to date)."""
    order = np.argsort(rows, kind="stable")
    rows, ids = rows[order], ids[order]
    starts = np.r_[True, rows[1:] != rows[:-1]]
    ends = np.r_[rows[1:] != rows[:-1], True]
    previous = np.where(starts, last_id[rows], np.r_[-1, ids[:-1]])
    last_id[rows[ends]] = ids[ends]
    return bool(np.all(ids > previous))


def _places(candidate: RowArray, filled: IntArray) -> IntArray:
    """Where a slice's labels go in the counting sort: after the labels of the same candidate
    placed so far (``filled`` holds each candidate's next free place, and is moved on)."""
    rows = candidate.astype(np.int64)
    order = np.argsort(rows, kind="stable")
    sorted_rows = rows[order]
    starts = np.flatnonzero(np.r_[True, sorted_rows[1:] != sorted_rows[:-1]])
    sizes = np.diff(np.r_[starts, rows.size])
    within = np.arange(rows.size) - np.repeat(starts, sizes)
    place = np.empty(rows.size, dtype=np.int64)
    place[order] = filled[sorted_rows] + within
    filled[sorted_rows[starts]] += sizes
    return place


def worker_names(worker_ids: Sequence[int]) -> dict[int, str]:
    return {
        pk: f"{kind}:{external_id}"
        for pk, kind, external_id in Worker.objects.filter(pk__in=list(worker_ids)).values_list(
            "id", "kind", "external_id"
        )
    }


def worker_control_accuracy(*, benchmark: Benchmark) -> dict[int, tuple[int, int]]:
    """Each worker's (correct, total) control answers over their submitted work in the benchmark (docs/design.md §5)."""
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


def control_answer_arrays(*, benchmark: Benchmark, worker_ids: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """(worker row in ``worker_ids``, accepted 0 / 1, known answer 0 / 1) of every answer to a control
    whose work counts (submitted or approved, unfiltered, confirmed), by workers of ``worker_ids``.

    The scheme says which of its answers stand for an accept (``QualificationGold.answers``) and what
    each kind of control expects (``control_check``): for SWORDS the copy of the target is known
    acceptable, the distractor not (docs/design.md §5). A scheme without controls gives none."""
    from hits.models import VALID_STATUSES, Answer, confirmed

    empty = np.zeros(0, dtype=np.int64)
    scheme = get_scheme(benchmark)
    gold = scheme_qualification(scheme)
    accepting = sorted(answer for answer, label in gold.answers.items() if label == LabelValue.ACCEPT) if gold else []
    if not worker_ids.size or not accepting:
        return empty, empty.copy(), empty.copy()
    known: dict[str, bool] = {}
    for kind in scheme.item_kinds:
        try:
            known[kind] = scheme.control_check(kind=kind, value=accepting[0])[0]
        except ValueError:
            continue  # not a control kind
    if not known:
        return empty, empty.copy(), empty.copy()
    answers = (
        Answer.objects.filter(
            confirmed("assignment__"),
            assignment__hit__batch__benchmark=benchmark,
            assignment__status__in=VALID_STATUSES,
            assignment__filtered=False,
            item__control=True,
            item__kind__in=sorted(known),
            assignment__worker_id__in=worker_ids.tolist(),
        )
        .order_by("id")
        .values_list(
            "assignment__worker_id",
            _flag(Q(value__in=accepting)),
            _flag(Q(item__kind__in=sorted(kind for kind, accepted in known.items() if accepted))),
        )
    )
    # Numbers only, packed a chunk at a time: a benchmark's controls are a fifth of its labels.
    parts = [np.zeros((0, 3), dtype=np.int64)]
    rows = stream_rows(answers)
    while chunk := list(islice(rows, CHUNK_SIZE)):
        parts.append(np.array(chunk, dtype=np.int64).reshape(-1, 3))
    packed = np.concatenate(parts)
    return np.searchsorted(worker_ids, packed[:, 0]).astype(np.int64), packed[:, 1], packed[:, 2]


def _flag(condition: Q) -> Case:
    """1 where ``condition`` holds, else 0, as a column."""
    return Case(When(condition, then=Value(1)), default=Value(0), output_field=IntegerField())
