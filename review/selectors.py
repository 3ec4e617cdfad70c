"""Reads for the pipeline: the rows spam filtering and advancement decide on, and progress for researchers."""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection
from django.db.models import Count, Q, QuerySet, Sum
from django.utils import timezone

from annotation.changes import KeptFigures, benchmark_cached, benchmark_kept, computed_once, figures_key
from annotation.models import Benchmark, Target, TargetStage, Worker
from crowdlex.pickled import pickled_by_fields
from crowdlex.statements import shaped_objects, shaped_rows
from hits.models import (
    HIT,
    SUBMITTED_STATUSES,
    Answer,
    Assignment,
    AssignmentStatus,
    AssignmentTelemetry,
    BatchStatus,
    HITReservation,
    confirmed,
)
from hits.selectors import VALID_ASSIGNMENT, open_batch_holdings_by_step
from hits.selectors.shares import BatchShare, HitWorkRows, LiveClaims, hit_work_rows, live_claims, target_shares
from hits.telemetry import Telemetry
from review.interaction import assignment_marks
from review.models import FlagReason, ReviewSettings, WorkerFlag
from review.signals import INTERACTION_REASONS, RowAnswer, SignalSettings, SubmittedWork
from review.spam import AssignmentControls
from schemes import get_scheme
from schemes.base import AnnotationScheme
from schemes.progress import (
    CollectedWork,
    CountsSum,
    ProgressTable,
    SchemeProgress,
    TargetCount,
    counts_sum,
    counts_sum_less,
    counts_sum_total,
    counts_sums_combined,
    progress_from_total,
    stage_name,
)


def review_settings(*, benchmark: Benchmark) -> ReviewSettings:
    """The benchmark's review settings; an unsaved row with the defaults when the researcher never set any."""
    # Built by the ORM once per process (``crowdlex.statements.shaped_objects``): most pages read it.
    found = shaped_objects(_review_settings, benchmark.pk)
    return found[0] if found else ReviewSettings(benchmark=benchmark)


def _review_settings(benchmark_id: int) -> QuerySet[ReviewSettings]:
    return ReviewSettings.objects.filter(benchmark_id=benchmark_id).order_by("pk")[:1]


def signal_settings(*, benchmark: Benchmark) -> SignalSettings:
    return SignalSettings.with_overrides(review_settings(benchmark=benchmark).signal_overrides)


def submitted_assignments(*, benchmark: Benchmark | int) -> QuerySet[Assignment]:
    """Submitted work the spam decisions see: only what its crowd confirmed (forged crowd ids count for nothing)."""
    return Assignment.objects.filter(confirmed(), hit__batch__benchmark=benchmark, status__in=SUBMITTED_STATUSES)


@dataclass(frozen=True)
class AssignmentState:
    controls: AssignmentControls
    status: str
    filtered: bool
    target_id: int | None = None


def assignment_states(*, benchmark: Benchmark, worker_ids: set[int] | None = None) -> list[AssignmentState]:
    """Every submitted assignment of the benchmark (of ``worker_ids`` only, if given) with its
    control outcome and its HIT's target: one query, no answers."""
    assignments = submitted_assignments(benchmark=benchmark)
    if worker_ids is not None:
        assignments = assignments.filter(worker_id__in=sorted(worker_ids))
    rows = assignments.values_list(
        "pk", "worker_id", "hit_id", "controls_correct", "controls_total", "status", "filtered", "hit__target_id"
    )
    return [
        AssignmentState(
            controls=AssignmentControls(
                assignment_id=pk,
                worker_id=worker_id,
                hit_id=hit_id,
                controls_correct=correct,
                controls_total=total,
            ),
            status=status,
            filtered=filtered,
            target_id=target_id,
        )
        for pk, worker_id, hit_id, correct, total, status, filtered, target_id in rows.order_by("pk")
    ]


def submitted_work(*, benchmark: Benchmark) -> list[SubmittedWork]:
    """Every submitted assignment with all its answers, for the bot signals (two queries)."""
    meta = {
        pk: (worker_id, hit_id, seconds, filtered)
        for pk, worker_id, hit_id, seconds, filtered in submitted_assignments(benchmark=benchmark).values_list(
            "pk", "worker_id", "hit_id", "seconds_on_page", "filtered"
        )
    }
    if not meta:
        return []
    rows: dict[int, list[RowAnswer]] = defaultdict(list)
    # Every answer of the benchmark: read with a plain cursor, as the ORM's rows cost more than the query.
    answers = Answer.objects.filter(assignment_id__in=list(meta)).values_list(
        "assignment_id", "item_id", "item__candidate_id", "value"
    )
    sql, params = answers.order_by("assignment_id", "item__position").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for assignment_id, item_id, candidate_id, value in cursor:
            rows[assignment_id].append(RowAnswer(item_id, candidate_id, value))
    telemetry = assignment_telemetry(assignment_ids=list(meta))
    return [
        SubmittedWork(
            assignment_id=pk,
            worker_id=worker_id,
            hit_id=hit_id,
            seconds_on_page=seconds,
            rows=tuple(rows[pk]),
            filtered=filtered,
            telemetry=telemetry.get(pk),
        )
        for pk, (worker_id, hit_id, seconds, filtered) in sorted(meta.items())
    ]


def assignment_telemetry(*, assignment_ids: list[int]) -> dict[int, Telemetry]:
    """The stored telemetry of these assignments, typed. Rows stored under an older shape that no longer
    reads are left out rather than stopping the review."""
    return _telemetry_of(
        AssignmentTelemetry.objects.filter(assignment_id__in=assignment_ids).values_list("assignment_id", "data")
    )


def _telemetry_of(rows: Iterable[tuple[int, Any]]) -> dict[int, Telemetry]:
    found: dict[int, Telemetry] = {}
    for pk, data in rows:
        try:
            found[pk] = Telemetry.from_stored(data)
        except ValidationError:
            continue
    return found


def failed_control_details(*, benchmark: Benchmark, assignment_ids: list[int]) -> dict[int, dict[str, Any]]:
    """For each failed assignment: its HIT, target, step and the control rows with the worker's answer
    and what the benchmark's scheme expected."""
    scheme = get_scheme(benchmark)
    details: dict[int, dict[str, Any]] = {}
    for pk, hit_id, word, step, submitted_at in Assignment.objects.filter(pk__in=assignment_ids).values_list(
        "pk", "hit_id", "hit__target__word", "hit__batch__step", "submitted_at"
    ):
        details[pk] = {
            "assignment": pk,
            "hit": hit_id,
            "target": word,
            "step": step,
            "submitted_at": submitted_at.isoformat() if submitted_at else None,
            "controls": [],
        }
    answers = Answer.objects.filter(assignment_id__in=assignment_ids, item__control=True).values_list(
        "assignment_id", "item__kind", "item__text", "value"
    )
    for assignment_id, kind, text, value in answers.order_by("assignment_id", "item__position"):
        correct, expected = scheme.control_check(kind=kind, value=value)
        details[assignment_id]["controls"].append(
            {"kind": kind, "text": text, "answer": value, "expected": expected, "correct": correct}
        )
    return details


# ---- progress, for the researcher's pages and the API ----


def _reservation_rows(
    benchmark_id: int, target_ids: list[int] | None
) -> QuerySet[HITReservation, tuple[int, str, int]]:
    hits = HIT.objects.filter(batch__benchmark_id=benchmark_id)
    if target_ids is not None:
        hits = hits.filter(target_id__in=target_ids)
    return HITReservation.objects.filter(hit__in=hits).values_list("worker_id", "worker__external_id", "hit__target_id")


def collected_work(
    *,
    benchmark: Benchmark,
    target_ids: list[int] | None = None,
    with_holdings: bool = True,
    rows: HitWorkRows | None = None,
) -> CollectedWork:
    """What the benchmark's HITs hold, for its scheme's progress and advancement (``schemes.progress.CollectedWork``):
    valid assignments and required ones per target and step, what batches not closed hold (left
    empty without ``with_holdings``: the refresh's decisions never need it, and it reads every item),
    and which targets are reserved for which named annotators. A few grouped queries, none per target.
    ``rows``: those targets' HITs and work as the batches' shares read them (``hit_work_rows``), from
    which the required and valid work are summed rather than read again."""
    hits = HIT.objects.filter(batch__benchmark=benchmark)
    if target_ids is not None:
        hits = hits.filter(target_id__in=target_ids)
    required: Counter[tuple[int, int]] = Counter()
    valid: dict[tuple[int, int], int]
    if rows is not None:
        steps = {batch_id: step for _, batch_id, step, *_ in rows.hits}
        for target_id, _, step, closed, size, _, _, count in rows.hits:
            if not closed:
                required[(target_id, step)] += size * count
        counted: Counter[tuple[int, int]] = Counter()
        for target_id, batch_id, *_, is_valid, count in rows.work:
            if is_valid:
                counted[(target_id, steps[batch_id])] += count
        valid = dict(counted)
    else:
        for target_id, step, total in (
            hits.exclude(batch__status=BatchStatus.CLOSED)
            .values_list("target_id", "batch__step")
            .annotate(total=Sum("assignments_required"))
            .order_by()
        ):
            required[(target_id, step)] = total
        valid = {
            (target_id, step): count
            for target_id, step, count in Assignment.objects.filter(VALID_ASSIGNMENT, hit__in=hits)
            .values_list("hit__target_id", "hit__batch__step")
            .annotate(count=Count("pk"))
            .order_by()
        }
    # Every step's holdings in one statement: the count does not grow with the steps.
    holdings = open_batch_holdings_by_step(benchmark=benchmark, target_ids=target_ids) if with_holdings else {}
    open_candidates = {step: frozenset(candidates) for step, (candidates, _) in holdings.items()}
    open_targets = {step: frozenset(targets) for step, (_, targets) in holdings.items()}
    reserved: dict[int, set[int]] = defaultdict(set)
    names: dict[int, str] = {}
    for worker_id, name, target_id in shaped_rows(_reservation_rows, benchmark.pk, target_ids):
        reserved[worker_id].add(target_id)
        names[worker_id] = name
    return CollectedWork(
        valid_assignments=valid,
        required_assignments=dict(required),
        open_candidates=open_candidates,
        open_targets=open_targets,
        reserved={worker_id: frozenset(targets) for worker_id, targets in reserved.items()},
        worker_names=names,
    )


@dataclass
class StepProgress:
    step: int
    title: str = ""
    # What the step counts, and of what, in the scheme's words ("valid labels" on "candidates").
    unit: str = ""
    item_noun: str = ""
    labels_collected: int = 0
    labels_needed: int = 0
    candidates: int = 0
    hits: int = 0
    open_slots: int = 0
    # Items of the step that lack work and sit in no open batch of it: what a new batch would take.
    waiting: int = 0
    waiting_noun: str = ""

    @property
    def percent(self) -> int:
        if not self.labels_needed:
            return 0
        return min(100, round(100 * self.labels_collected / self.labels_needed))


@pickled_by_fields
@dataclass
class TargetStepProgress:
    step: int
    # None: a step the target has not reached.
    collected: int | None
    needed: int | None


@pickled_by_fields
@dataclass
class TargetProgress:
    target_id: int
    word: str
    pos: str
    context: str
    stage: str
    stage_name: str
    candidates: int = 0
    steps: list[TargetStepProgress] = field(default_factory=list)
    # The scheme's own figures by name, in the order of ``PipelineProgress.target_columns``.
    counts: dict[str, int] = field(default_factory=dict)
    open_slots: int = 0


@dataclass
class StageCount:
    stage: str
    name: str
    count: int


@dataclass
class PipelineProgress:
    benchmark: Benchmark
    targets_by_stage: dict[str, int]
    candidates_by_stage: dict[str, int]
    steps: list[StepProgress]
    targets: Sequence[TargetProgress] = field(default_factory=list)
    assignments: dict[str, int] = field(default_factory=dict)
    # The scheme's words: names of the stages, of the per-target figures, its own tables, a summary.
    target_stage_names: dict[str, str] = field(default_factory=dict)
    candidate_stage_names: dict[str, str] = field(default_factory=dict)
    target_columns: tuple[str, ...] = ()
    tables: list[ProgressTable] = field(default_factory=list)
    summary: str = ""

    @property
    def targets_total(self) -> int:
        return sum(self.targets_by_stage.values())

    @property
    def finished(self) -> bool:
        return self.targets_total > 0 and self.targets_by_stage.get(TargetStage.DONE, 0) == self.targets_total

    @property
    def target_table_width(self) -> int:
        """Columns of the pages' target table: target, context, stage, candidates, the scheme's own
        figures, one per step, open slots."""
        return 5 + len(self.target_columns) + len(self.steps)

    @property
    def target_stages(self) -> list[StageCount]:
        """Targets per stage, named in the scheme's words (for the pages)."""
        names = self.target_stage_names
        return [StageCount(stage, names.get(stage, stage), n) for stage, n in self.targets_by_stage.items()]

    @property
    def candidate_stages(self) -> list[StageCount]:
        return [
            StageCount(stage, self.candidate_stage_names.get(stage, stage), n)
            for stage, n in self.candidates_by_stage.items()
        ]


def pipeline_progress(*, benchmark: Benchmark, with_targets: bool = True) -> PipelineProgress:
    """Counts per stage, work collected / needed per step, and one row per target, as the benchmark's
    scheme counts them (``AnnotationScheme.progress``: valid labels capped per candidate at what the
    step needs, judgments per named annotator, items whose work is in).

    HITs and open slots are counted here, per step the scheme reports: open slots are those HITs
    still offer (in open batches, of targets not done). Computed once per change of the benchmark
    (``annotation.changes``): it reads every label of the benchmark.
    """
    key = figures_key(benchmark_id=benchmark.pk)
    # The summary the benchmark page and the live poll read holds no target rows: after a change
    # they count the targets by stage and read no target's row (docs/design.md §7). The pipeline
    # page's rows are built a chunk at a time, the chunk the page shows (``TargetRows``).

    def compute() -> PipelineProgress:
        summary = _pipeline_summary(benchmark)
        if not with_targets:
            return summary
        scheme = get_scheme(benchmark)
        if not scheme.progress_by_target(scheme.settings(benchmark)):
            # A scheme counted from every row: the rows of every chunk with the summary, from one count.
            rows = _target_rows(summary, 0, None)
            for start in range(0, len(rows), TARGET_ROWS_CHUNK):
                chunk = rows[start : start + TARGET_ROWS_CHUNK]
                benchmark_cached(benchmark=benchmark, name=f"pipeline-targets:{start}", compute=chunk.copy, key=key)
        else:
            # The first page's rows with the summary: what a submit moves is brought up to date
            # once for both (the change read, the kept figures and the claims read once,
            # ``computed_once``), not again by the page's rows (docs/design.md §7).
            benchmark_cached(
                benchmark=benchmark,
                name="pipeline-targets:0",
                compute=lambda: _target_rows(summary, 0, TARGET_ROWS_CHUNK),
                key=key,
            )
        return summary

    summary = benchmark_cached(benchmark=benchmark, name="pipeline-progress", compute=compute, key=key)
    summary = dataclasses.replace(summary, benchmark=benchmark)
    if not with_targets:
        return summary
    return dataclasses.replace(summary, targets=TargetRows(summary=summary, key=key))


# Rows of the pipeline's target table built and cached together (the pipeline page shows 200 at a time).
TARGET_ROWS_CHUNK = 200


class TargetRows(Sequence[TargetProgress]):
    """The rows of a benchmark's target table as of ``key``, built and cached a chunk at a time (a
    page of the table builds one chunk: the rows of its targets, from the figures kept per target,
    not every target's row), or all at once when iterated whole (the API)."""

    def __init__(self, *, summary: PipelineProgress, key: str) -> None:
        self.summary = summary
        self.benchmark = summary.benchmark
        self.key = key
        self.total = summary.targets_total
        self._chunks: dict[int, list[TargetProgress]] = {}

    def __len__(self) -> int:
        return self.total

    def _chunk(self, start: int) -> list[TargetProgress]:
        if start not in self._chunks:
            self._chunks[start] = benchmark_cached(
                benchmark=self.benchmark,
                name=f"pipeline-targets:{start}",
                compute=lambda: _target_rows(self.summary, start, start + TARGET_ROWS_CHUNK),
                key=self.key,
            )
        return self._chunks[start]

    def __iter__(self) -> Iterator[TargetProgress]:
        if len(self._chunks) * TARGET_ROWS_CHUNK >= self.total:
            for start in range(0, self.total, TARGET_ROWS_CHUNK):
                yield from self._chunk(start)
            return
        yield from benchmark_cached(
            benchmark=self.benchmark,
            name="pipeline-targets",
            compute=lambda: _target_rows(self.summary, 0, None),
            key=self.key,
        )

    @overload
    def __getitem__(self, index: int) -> TargetProgress: ...

    @overload
    def __getitem__(self, index: slice) -> list[TargetProgress]: ...

    def __getitem__(self, index: int | slice) -> TargetProgress | list[TargetProgress]:
        if isinstance(index, slice):
            return [self[position] for position in range(*index.indices(self.total))]
        if index < 0:
            index += self.total
        if not 0 <= index < self.total:
            raise IndexError(index)
        start = index - index % TARGET_ROWS_CHUNK
        return self._chunk(start)[index - start]


def _scheme_progress(
    *, benchmark: Benchmark, scheme: AnnotationScheme
) -> tuple[SchemeProgress, KeptFigures[TargetCount, CountsSum] | None]:
    """The scheme's progress of the whole benchmark, and its targets' rows kept per target. Kept per
    target when the scheme's progress is a sum over targets (``AnnotationScheme.progress_by_target``),
    with their exact sum kept beside them (``schemes.progress.CountsSum``), so after a submit or a
    refresh of touched work only the targets it touched are counted again, their shares taken out
    of the sum and added anew, and no other target's share is read or summed
    (``annotation.changes.benchmark_kept``, docs/design.md §7 "Incremental figures"); counted from
    every label otherwise (its targets' rows in the progress, and None)."""
    # The pipeline page's summary and its rows, computed together, read the figures once.
    return computed_once(f"scheme-progress:{benchmark.pk}", lambda: _scheme_progress_now(benchmark, scheme))


def _scheme_progress_now(
    benchmark: Benchmark, scheme: AnnotationScheme
) -> tuple[SchemeProgress, KeptFigures[TargetCount, CountsSum] | None]:
    settings = scheme.settings(benchmark)
    if not scheme.progress_by_target(settings):
        work = collected_work(benchmark=benchmark)
        return scheme.progress(benchmark=benchmark, settings=settings, work=work), None

    def compute(target_ids: list[int] | None) -> dict[int, TargetCount]:
        # The changed targets' HITs and work read once for their progress and their batches' shares;
        # a count of every target reads its own (docs/design.md §7, "Incremental figures").
        rows = None if target_ids is None else hit_work_rows(benchmark.pk, target_ids)
        work = collected_work(benchmark=benchmark, target_ids=target_ids, rows=rows)
        return scheme.progress(benchmark=benchmark, settings=settings, work=work, target_ids=target_ids).targets

    kept = benchmark_kept(
        benchmark_id=benchmark.pk,
        # Named apart from the figures kept before their exact sum was kept beside them.
        name=f"progress-sum:{scheme.name}",
        compute=compute,
        summarise=counts_sum,
        combine=counts_sums_combined,
        take=counts_sum_less,
    )
    empty = scheme.progress(benchmark=benchmark, settings=settings, work=CollectedWork(), target_ids=[])
    return progress_from_total(empty, counts_sum_total(kept.total)), kept


def _pipeline_progress(*, benchmark: Benchmark, with_targets: bool) -> PipelineProgress:
    """The pipeline's progress computed now (with every target's row when ``with_targets``)."""
    summary = _pipeline_summary(benchmark)
    if not with_targets:
        return summary
    return dataclasses.replace(summary, targets=_target_rows(summary, 0, None))


def _pipeline_summary(benchmark: Benchmark) -> PipelineProgress:
    """The pipeline's figures without target rows: the scheme's sums and the batches' shares as
    kept per target with their totals, the live claims, the targets by stage (one grouped count)."""
    scheme = get_scheme(benchmark)
    counted, _ = _scheme_progress(benchmark=benchmark, scheme=scheme)
    stage_names = dict(scheme.target_stage_names)
    steps = {
        each.step: StepProgress(
            step=each.step,
            title=each.title,
            unit=each.unit,
            item_noun=each.item_noun,
            labels_collected=each.collected,
            labels_needed=each.needed,
            candidates=each.items,
            waiting=each.waiting,
            waiting_noun=each.waiting_noun,
        )
        for each in counted.steps
    }

    # HITs, open slots and work by status from the shares' totals kept beside the shares, live
    # claims read now (hits.selectors.shares; docs/design.md §7, "Incremental figures").
    statuses: Counter[str] = Counter()
    filtered = 0
    for share in _shares(benchmark).total.values():
        for status, number in share.statuses:
            statuses[status] += number
        filtered += share.filtered
        if share.step not in steps:
            # A step another scheme runs for this one has no progress counted here.
            continue
        steps[share.step].hits += share.hits
        steps[share.step].open_slots += share.free
    claims = _claims(benchmark)
    statuses[AssignmentStatus.CLAIMED] += claims.total
    for (step, _), held in claims.holding.items():
        if step in steps:
            steps[step].open_slots -= held
    assignments = {status: statuses.get(status, 0) for status in AssignmentStatus.values}
    assignments["filtered"] = filtered
    # Built by the ORM once per process (``crowdlex.statements.shaped_rows``), as the rows below.
    by_stage = Counter(dict(shaped_rows(_targets_by_stage, benchmark.pk)))
    shown = list(stage_names) + sorted(set(by_stage) - set(stage_names))
    return PipelineProgress(
        benchmark=benchmark,
        targets_by_stage={stage: by_stage.get(stage, 0) for stage in shown},
        candidates_by_stage=counted.candidates_by_stage,
        steps=[steps[each.step] for each in counted.steps],
        targets=[],
        assignments=assignments,
        target_stage_names=stage_names,
        candidate_stage_names=dict(scheme.candidate_stage_names),
        target_columns=counted.target_columns,
        tables=counted.tables,
        summary=counted.summary,
    )


def _target_rows(summary: PipelineProgress, start: int, stop: int | None) -> list[TargetProgress]:
    """The rows of the targets from ``start`` to ``stop`` (None: the last) in the target table's order,
    with the columns of ``summary``: their progress and open slots read from the figures kept per
    target for those targets alone (docs/design.md §7, "Incremental figures"). A scheme whose
    progress is not kept per target counts every target's row."""
    benchmark = summary.benchmark
    scheme = get_scheme(benchmark)
    # Built by the ORM once per process and slice (``crowdlex.statements.shaped_rows``): the slice is
    # part of the statement's text, and the table's slices are a chunk's multiples.
    rows = shaped_rows(_target_table_rows, benchmark.pk, f"{start}:{'' if stop is None else stop}")
    if not rows:
        return []
    ids = [row[0] for row in rows]
    counted, kept = _scheme_progress(benchmark=benchmark, scheme=scheme)
    step_numbers = [step.step for step in summary.steps]
    columns = summary.target_columns
    if kept is None:
        counts = {target_id: counted.targets[target_id] for target_id in ids if target_id in counted.targets}
        figures = _row_figures_of(counts, _shares(benchmark).of(ids), columns, step_numbers)
    else:
        figures = _row_figures(benchmark, scheme, kept, columns, step_numbers).of(ids)
    held: Counter[int] = Counter()
    for (step, target_id), number in _claims(benchmark).holding.items():
        if step in step_numbers:
            held[target_id] += number
    # Each row built once per process for what it is built from (its target's row, figures and
    # claimed work, under the scheme's stage names and the table's columns and steps): after a
    # submit only its targets' rows are built again (docs/design.md §7, "Rendered fragments").
    stage_names = scheme.target_stage_names
    built = _ROWS_BUILT.setdefault((scheme.name, repr(stage_names), tuple(columns), tuple(step_numbers)), {})
    found = []
    for row in rows:
        target_id = row[0]
        key = (row, figures.get(target_id), held.get(target_id, 0))
        target = built.get(key)
        if target is None:
            if len(built) >= settings.PIPELINE_ROWS_KEPT:
                built.clear()
            target = built[key] = _target_progress(row, key[1], key[2], dict(stage_names), columns, step_numbers)
        found.append(target)
    return found


# The pipeline's target rows as built (``_target_rows``), by the scheme, its stage names and the
# table's columns and steps, then by what each is built from; at most ``PIPELINE_ROWS_KEPT`` of each.
# Shared by the pages that show them: never changed once built.
_ROWS_BUILT: dict[tuple[Any, ...], dict[tuple[Any, ...], TargetProgress]] = {}


def _target_progress(
    row: tuple[int, str, str, str, str],
    figures: RowFigures | None,
    held: int,
    stage_names: Mapping[str, str],
    columns: Sequence[str],
    step_numbers: Sequence[int],
) -> TargetProgress:
    """A target's row: its target (id, word, part of speech, context, stage), its figures (None: no
    HIT and no progress counted) and the slots of its HITs claimed now."""
    pk, word, pos, text, stage = row
    target = TargetProgress(
        target_id=pk, word=word, pos=pos, context=text, stage=stage, stage_name=stage_name(stage_names, stage)
    )
    if figures is not None:
        candidates, figures_shown, cells, free = figures
        target.open_slots += free
        if figures_shown is not None:
            target.candidates = candidates
            target.counts = dict(zip(columns, figures_shown, strict=True))
            target.steps = [
                TargetStepProgress(step, *(cell if cell is not None else (None, None)))
                for step, cell in zip(step_numbers, cells, strict=True)
            ]
    target.open_slots -= held
    return target


# A target's figures in the pipeline's target table before live claims: its candidates, the
# scheme's own figures in the order of the table's columns (None: no progress counted for it),
# (collected, needed) of each step the table shows (None: a step it has not reached) and the open
# slots of its HITs in those steps. Plain tuples: a page of the table reads 200 of them.
RowFigures = tuple[int, tuple[int, ...] | None, tuple[tuple[int, int] | None, ...], int]


def _row_figures_of(
    counts: Mapping[int, TargetCount],
    shares: Mapping[int, dict[int, BatchShare]],
    columns: Sequence[str],
    step_numbers: Sequence[int],
) -> dict[int, RowFigures]:
    """The table's figures of the targets with progress counted (``counts``) or HITs (``shares``)."""
    found: dict[int, RowFigures] = {}
    for target_id in sorted(set(counts) | set(shares)):
        free = sum(share.free for share in shares.get(target_id, {}).values() if share.step in step_numbers)
        count = counts.get(target_id)
        if count is None:
            found[target_id] = (0, None, (), free)
        else:
            found[target_id] = (
                count.candidates,
                tuple(count.counts.get(name, 0) for name in columns),
                tuple(count.steps.get(step) for step in step_numbers),
                free,
            )
    return found


def _row_figures(
    benchmark: Benchmark,
    scheme: AnnotationScheme,
    kept: KeptFigures[TargetCount, CountsSum],
    columns: Sequence[str],
    step_numbers: Sequence[int],
) -> KeptFigures[RowFigures, None]:
    """The table's figures of every target, kept per target (``annotation.changes.benchmark_kept``)
    from the progress and the batches' shares kept per target: a change computes those of the
    targets it touched from their kept figures, already read to bring those up to date, and a page
    of the table reads the plain tuples of its targets rather than their progress and shares
    (docs/design.md §7, "Incremental figures")."""
    # The table's columns and steps are the scheme's under its settings: part of the name.
    shape = hashlib.sha256(repr((tuple(columns), tuple(step_numbers))).encode()).hexdigest()[:12]

    def compute(target_ids: list[int] | None) -> dict[int, RowFigures]:
        shares = _shares(benchmark)
        if target_ids is None:
            return _row_figures_of(kept.all(), shares.all(), columns, step_numbers)
        return _row_figures_of(kept.of(target_ids), shares.of(target_ids), columns, step_numbers)

    return computed_once(
        f"pipeline-row-figures:{benchmark.pk}",
        lambda: benchmark_kept(benchmark_id=benchmark.pk, name=f"pipeline-rows:{scheme.name}:{shape}", compute=compute),
    )


def _targets_by_stage(benchmark_id: int) -> QuerySet[Target, tuple[str, int]]:
    return (
        Target.objects.filter(benchmark_id=benchmark_id)
        .values_list("stage")
        .annotate(count=Count("pk"))
        .values_list("stage", "count")
        .order_by()
    )


def _target_table_rows(benchmark_id: int, bounds: str) -> QuerySet[Target, tuple[int, str, str, str, str]]:
    """The target table's rows of a slice ``"start:stop"`` (no stop: to the last), in id order."""
    start, _, stop = bounds.partition(":")
    rows = Target.objects.filter(benchmark_id=benchmark_id).values_list("pk", "word", "pos", "context__text", "stage")
    return rows.order_by("pk")[int(start) : int(stop) if stop else None]


def _shares(benchmark: Benchmark) -> KeptFigures[dict[int, BatchShare], dict[int, BatchShare]]:
    """The targets' shares of the batches, brought up to date once for the summary and the rows
    computed together (``computed_once``)."""
    return computed_once(f"pipeline-shares:{benchmark.pk}", lambda: target_shares(benchmark_id=benchmark.pk))


def _claims(benchmark: Benchmark) -> LiveClaims:
    """The work claimed now, read once for the summary and the rows computed together."""
    return computed_once(
        f"pipeline-claims:{benchmark.pk}", lambda: live_claims(benchmark_id=benchmark.pk, now=timezone.now())
    )


# ---- flagged workers ----


@dataclass
class FlaggedWorker:
    worker: Worker
    flags: list[WorkerFlag]
    active: bool
    assignments: int = 0
    filtered: int = 0


def benchmark_flags(*, benchmark: Benchmark, include_cleared: bool = True) -> QuerySet[WorkerFlag]:
    flags = WorkerFlag.objects.filter(benchmark=benchmark).select_related("worker", "cleared_by")
    if not include_cleared:
        flags = flags.filter(cleared_at__isnull=True)
    return flags.order_by("worker_id", "reason")


def flagged_workers(*, benchmark: Benchmark, include_cleared: bool = True) -> list[FlaggedWorker]:
    """Workers with flags in the benchmark, active ones first, each with their flags and work counts."""
    by_worker: dict[int, FlaggedWorker] = {}
    for flag in benchmark_flags(benchmark=benchmark, include_cleared=include_cleared):
        entry = by_worker.setdefault(flag.worker_id, FlaggedWorker(worker=flag.worker, flags=[], active=False))
        entry.flags.append(flag)
        entry.active = entry.active or flag.active
    counts = (
        submitted_assignments(benchmark=benchmark)
        .filter(worker_id__in=list(by_worker))
        .values("worker_id")
        .annotate(n=Count("pk"), filtered=Count("pk", filter=Q(filtered=True)))
        .order_by()
    )
    for row in counts:
        by_worker[row["worker_id"]].assignments = row["n"]
        by_worker[row["worker_id"]].filtered = row["filtered"]
    return sorted(by_worker.values(), key=lambda entry: (not entry.active, entry.worker.external_id))


def active_flag_counts(*, benchmark: Benchmark) -> dict[str, int]:
    """How many workers carry an active flag, in all and for control accuracy."""
    # One grouped statement, built by the ORM once per process (``crowdlex.statements.shaped_rows``):
    # every live poll reads it.
    workers = control_accuracy = 0
    for _, control in shaped_rows(_active_flag_rows, benchmark.pk):
        workers += 1
        control_accuracy += control
    return {"workers": workers, "control_accuracy": control_accuracy}


def _active_flag_rows(benchmark_id: int) -> QuerySet[WorkerFlag, tuple[int, int]]:
    """Per worker with an active flag: its active flags for control accuracy."""
    return (
        WorkerFlag.objects.filter(benchmark_id=benchmark_id, cleared_at__isnull=True)
        .values("worker_id")
        .annotate(control=Count("pk", filter=Q(reason=FlagReason.CONTROL_ACCURACY)))
        .values_list("worker_id", "control")
        .order_by()
    )


def _submitted_count(benchmark_id: int) -> QuerySet[Assignment, tuple[int]]:
    # Grouped by the benchmark's batches' benchmark: one row, or none without submitted work.
    return (
        submitted_assignments(benchmark=benchmark_id)
        .values("hit__batch__benchmark_id")
        .annotate(n=Count("pk"))
        .values_list("n")
        .order_by()
    )


def _submitted_telemetry_rows(benchmark_id: int) -> QuerySet[AssignmentTelemetry, tuple[int, Any]]:
    submitted = submitted_assignments(benchmark=benchmark_id).values("pk")  # type: ignore[arg-type]
    return AssignmentTelemetry.objects.filter(assignment_id__in=submitted).values_list("assignment_id", "data")


def interaction_summary(*, benchmark: Benchmark) -> dict[str, Any]:
    """Per benchmark, the share of submitted (and confirmed) assignments whose telemetry shows each signal by
    itself (``review.interaction.assignment_marks`` under the benchmark's thresholds), for the statistics."""
    settings = signal_settings(benchmark=benchmark)
    # Built by the ORM once per process (``crowdlex.statements.shaped_rows``), the telemetry read by
    # the submitted work's subquery rather than by a list of its ids.
    submitted = sum(count for (count,) in shaped_rows(_submitted_count, benchmark.pk))
    recorded = _telemetry_of(shaped_rows(_submitted_telemetry_rows, benchmark.pk))
    counts: Counter[str] = Counter()
    for telemetry in recorded.values():
        counts.update(assignment_marks(telemetry, settings))
    return {
        "assignments": submitted,
        "with_telemetry": len(recorded),
        "signals": {
            reason: {
                "assignments": counts[reason],
                "share": round(counts[reason] / len(recorded), 4) if recorded else None,
            }
            for reason in INTERACTION_REASONS
        },
    }
