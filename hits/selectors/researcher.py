"""Reads for researchers: who works on a benchmark, batches and their progress and costs, HITs, their
answers and flags; and what the queue offers (``OFFERED_HIT``)."""

from __future__ import annotations

import dataclasses
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.paginator import Page, Paginator
from django.db.models import Count, F, FloatField, Func, Max, Prefetch, Q, QuerySet, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.changes import benchmark_cached
from annotation.models import Benchmark, TargetStage
from crowdlex.dialect import dialect
from crowdlex.sql import instance_of
from crowdlex.statements import shaped_count, shaped_objects, shaped_rows
from hits.models import (
    HIT,
    SUBMITTED_STATUSES,
    VALID_STATUSES,
    Answer,
    Assignment,
    AssignmentStatus,
    Batch,
    BatchStatus,
    Bonus,
    BonusStatus,
    HITFlag,
    HITItem,
    HITReservation,
    confirmed,
)

# A HIT offers its free slots while its batch is open and its target still collects: once a target
# is done, nothing more of it is collected whatever slots its HITs have left (the claim query in
# hits.services.queue says the same in SQL).
OFFERED_HIT = Q(batch__status=BatchStatus.OPEN) & ~Q(target__stage=TargetStage.DONE)


@dataclass(frozen=True)
class AnnotatorWork:
    """What one named annotator was assigned in a benchmark and how far they are."""

    worker_id: int
    name: str
    targets: int
    shared: int
    submitted: int
    in_progress: int

    @property
    def percent(self) -> int:
        return round(100 * self.submitted / self.targets) if self.targets else 0


def targets_worked_by(benchmark_id: int, worker_ids: set[int]) -> set[int]:
    """The targets whose HITs of the benchmark the workers hold any assignment of (submitted or not):
    what their submits may have changed (``annotation.changes.targets_changed``). One statement, on
    the assignments' (worker, status) index."""
    return set(
        Assignment.objects.filter(worker_id__in=sorted(worker_ids), hit__batch__benchmark_id=benchmark_id)
        .values_list("hit__target_id", flat=True)
        .distinct()
        .order_by()
    )


def benchmark_has_reservations(*, benchmark: Benchmark) -> bool:
    # Built by the ORM once per process (``crowdlex.statements.shaped_rows``): the benchmark page
    # asks after every change.
    return bool(shaped_rows(_any_reservation, benchmark.pk))


def _any_reservation(benchmark_id: int) -> QuerySet[HITReservation, tuple[int]]:
    return HITReservation.objects.filter(hit__batch__benchmark_id=benchmark_id).values_list("pk").order_by()[:1]


def benchmark_assignments(*, benchmark: Benchmark, now: datetime | None = None) -> list[AnnotatorWork]:
    """Each annotator with reserved HITs in the benchmark (``HITReservation``): HITs assigned,
    those shared with another annotator, submitted and in progress; by name."""
    now = now or timezone.now()
    reserved = list(
        HITReservation.objects.filter(hit__batch__benchmark=benchmark).values_list(
            "hit_id", "worker_id", "worker__external_id"
        )
    )
    holders = Counter(hit_id for hit_id, _, _ in reserved)
    work = Assignment.objects.filter(hit_id__in=holders).values_list("hit_id", "worker_id", "status", "deadline")
    submitted: Counter[int] = Counter()
    in_progress: Counter[int] = Counter()
    for _, worker_id, status, deadline in work:
        if status in SUBMITTED_STATUSES:
            submitted[worker_id] += 1
        elif status == AssignmentStatus.CLAIMED and deadline > now:
            in_progress[worker_id] += 1
    names = {worker_id: name for _, worker_id, name in reserved}
    targets = Counter(worker_id for _, worker_id, _ in reserved)
    shared = Counter(worker_id for hit_id, worker_id, _ in reserved if holders[hit_id] > 1)
    return sorted(
        (
            AnnotatorWork(
                worker_id=worker_id,
                name=names[worker_id],
                targets=targets[worker_id],
                shared=shared[worker_id],
                submitted=submitted[worker_id],
                in_progress=in_progress[worker_id],
            )
            for worker_id in targets
        ),
        key=lambda row: row.name,
    )


def open_batch_holdings(
    *, benchmark: Benchmark, step: int, target_ids: list[int] | None = None
) -> tuple[dict[int, int], dict[int, int]]:
    """What non-closed batches of ``step`` collect: candidate id -> batch id (a candidate is in at
    most one), and target id -> batch id (for schemes whose item is the target itself).

    A HIT whose required assignments are all submitted and valid collects nothing more: its items
    are free for a later round of the step (a stopping policy's, docs/design.md §13)."""
    return open_batch_holdings_by_step(benchmark=benchmark, step=step, target_ids=target_ids).get(step, ({}, {}))


def open_batch_holdings_by_step(
    *, benchmark: Benchmark, step: int | None = None, target_ids: list[int] | None = None
) -> dict[int, tuple[dict[int, int], dict[int, int]]]:
    """``open_batch_holdings`` of every step at once (of ``step`` alone when given), by step, in one
    statement however many steps the benchmark has; a step whose open batches hold nothing is left out."""
    # Every submit's first reader reads these for its targets: the ORM's statement built once.
    rows = shaped_rows(_holding_rows, benchmark.pk, step, target_ids)
    holdings: dict[int, tuple[dict[int, int], dict[int, int]]] = {}
    for each_step, candidate_id, target_id, batch_id in rows:
        candidates, targets = holdings.setdefault(each_step, ({}, {}))
        if candidate_id is not None:
            candidates[candidate_id] = batch_id
        targets[target_id] = batch_id
    return holdings


def _holding_rows(
    benchmark_id: int, step: int | None, target_ids: list[int] | None
) -> QuerySet[HITItem, tuple[int, int | None, int, int]]:
    """The items of the HITs of open batches (of ``step`` and ``target_ids`` when given) that still
    collect, with their step, target and batch."""
    items = HITItem.objects.filter(hit__batch__benchmark_id=benchmark_id).exclude(hit__batch__status=BatchStatus.CLOSED)
    finished = (
        HIT.objects.filter(batch__benchmark_id=benchmark_id)
        .exclude(batch__status=BatchStatus.CLOSED)
        .annotate(valid=Count("assignments", filter=_valid("assignments__")))
        .filter(valid__gte=F("assignments_required"))
        .values("pk")
    )
    if step is not None:
        items = items.filter(hit__batch__step=step)
        finished = finished.filter(batch__step=step)
    if target_ids is not None:
        items = items.filter(hit__target_id__in=target_ids)
        finished = finished.filter(target_id__in=target_ids)
    return items.exclude(hit__in=finished).values_list(
        "hit__batch__step", "candidate_id", "hit__target_id", "hit__batch_id"
    )


def _valid(prefix: str = "") -> Q:
    """Work that counts: submitted or approved, not filtered as spam (docs/design.md §5), and confirmed by its crowd."""
    return Q(**{f"{prefix}status__in": VALID_STATUSES, f"{prefix}filtered": False}) & confirmed(prefix)


VALID_ASSIGNMENT = _valid()


def _in_flight(now: datetime, prefix: str = "") -> Q:
    return Q(**{f"{prefix}status": AssignmentStatus.CLAIMED, f"{prefix}deadline__gt": now})


@dataclass(frozen=True)
class BatchProgress:
    """Where a batch stands. Costs are priced by the batch's crowd (``Backend.price``: rewards and
    the crowd's fee), bonuses sent included: the same figures as the batch form's preview and the
    publish page. So far: the valid assignments; projected: every required assignment."""

    hits_total: int
    hits_complete: int
    assignments_required: int
    assignments_valid: int
    assignments_filtered: int
    assignments_in_flight: int
    median_seconds: float | None
    reward: Decimal
    cost_so_far: Decimal
    cost_projected: Decimal

    @property
    def percent_complete(self) -> float:
        return 100.0 * self.hits_complete / self.hits_total if self.hits_total else 0.0

    @property
    def percent_assignments(self) -> float:
        if not self.assignments_required:
            return 0.0
        return min(100.0, 100.0 * self.assignments_valid / self.assignments_required)


def _seconds_per_assignment() -> Func:
    # Time on page as the annotator page measured it; the claim-to-submit span where it did not.
    span = Func(F("submitted_at") - F("claimed_at"), template="EXTRACT(EPOCH FROM %(expressions)s)")
    return Coalesce(F("seconds_on_page"), span, output_field=FloatField())


def _sent_bonus_rows(batch_ids: list[int]) -> QuerySet[Bonus, tuple[int, Decimal]]:
    return Bonus.objects.filter(assignment__hit__batch_id__in=batch_ids, status=BonusStatus.SENT).values_list(
        "assignment__hit__batch_id", "amount"
    )


def _median_rows(batch_ids: list[int]) -> QuerySet[Assignment, tuple[int, float | None]]:
    valid = Assignment.objects.filter(VALID_ASSIGNMENT, hit__batch_id__in=batch_ids)
    return (
        valid.values("hit__batch_id")
        .annotate(median=dialect().median(_seconds_per_assignment()))
        .values_list("hit__batch_id", "median")
        .order_by()
    )


def _median_seconds(batch_ids: list[int]) -> dict[int, float]:
    sql = dialect()
    if sql.ordered_aggregates:
        # The exact median in the database; elsewhere computed in Python.
        # Built by the ORM once per process (``crowdlex.statements.shaped_rows``): every batch's page
        # and poll reads it.
        return {batch_id: median for batch_id, median in shaped_rows(_median_rows, batch_ids) if median is not None}
    seconds: dict[int, list[float]] = defaultdict(list)
    valid = Assignment.objects.filter(VALID_ASSIGNMENT, hit__batch_id__in=batch_ids)
    for batch_id, on_page, claimed_at, submitted_at in valid.values_list(
        "hit__batch_id", "seconds_on_page", "claimed_at", "submitted_at"
    ):
        if on_page is None and submitted_at is not None:
            on_page = (submitted_at - claimed_at).total_seconds()
        if on_page is not None:
            seconds[batch_id].append(on_page)
    return {batch_id: statistics.median(values) for batch_id, values in seconds.items()}


def batches_progress(*, batches: Iterable[Batch], now: datetime | None = None) -> dict[int, BatchProgress]:
    """Progress of several batches in four grouped queries, whatever their number of HITs. The
    batches of one benchmark, as of now, are read from the progress of every batch of it, computed
    once per change of it (``annotation.changes``) and warmed after a change (hits/warmers.py): the
    list, the benchmark page, each batch's page and its live poll read the same figures."""
    listed = list(batches)
    benchmarks = {batch.benchmark_id for batch in listed}
    if now is not None or len(benchmarks) != 1:
        return _batches_progress(batches=listed, now=now)
    benchmark_id = benchmarks.pop()
    kept = benchmark_batches_progress(benchmark_id=benchmark_id)
    found = {batch.pk: kept[batch.pk] for batch in listed if batch.pk in kept}
    # A batch the kept figures do not hold yet (read before its creation's change key): counted now.
    missing = [batch for batch in listed if batch.pk not in found]
    if missing:
        found.update(_kept_batches_progress(benchmark_id=benchmark_id, batches=missing))
    return {batch.pk: found[batch.pk] for batch in listed}


def _progress_batch_rows(benchmark_id: int) -> QuerySet[Batch, tuple[int, int, str, Decimal]]:
    # In the model's order of fields, as ``instance_of`` takes them.
    return Batch.objects.filter(benchmark_id=benchmark_id).values_list("id", "benchmark_id", "backend", "reward")


def benchmark_batches_progress(*, benchmark_id: int) -> dict[int, BatchProgress]:
    """The progress of every batch of the benchmark, as of now, once per change of it."""

    def compute() -> dict[int, BatchProgress]:
        # The four fields the progress reads, by the statement built once (``shaped_rows``).
        batches = [
            instance_of(Batch, id=pk, benchmark_id=benchmark, backend=backend, reward=reward)
            for pk, benchmark, backend, reward in shaped_rows(_progress_batch_rows, benchmark_id)
        ]
        return _kept_batches_progress(benchmark_id=benchmark_id, batches=batches)

    return benchmark_cached(benchmark=benchmark_id, name="batches-progress", compute=compute)


def _kept_batches_progress(*, benchmark_id: int, batches: list[Batch]) -> dict[int, BatchProgress]:
    """``_batches_progress`` of batches of one benchmark, as of now, from the figures kept per target
    (hits.selectors.shares) and the live claims: after a submit it reads the targets that submit
    touched, the benchmark's live claims, the batches' medians and their bonuses, not every HIT."""
    from hits.selectors.shares import batch_totals, live_claims, target_shares

    now = timezone.now()
    by_id = {batch.pk: batch for batch in batches}
    if not by_id:
        return {}
    totals = batch_totals(target_shares(benchmark_id=benchmark_id).total, by_id)
    claims = live_claims(benchmark_id=benchmark_id, now=now)
    medians = _median_seconds(list(by_id))
    costs = _batch_costs(
        by_id,
        sizes={batch_id: total.sizes for batch_id, total in totals.items()},
        valid={batch_id: total.valid_sizes for batch_id, total in totals.items()},
    )
    progress = {}
    for batch_id, batch in by_id.items():
        total = totals.get(batch_id)
        progress[batch_id] = BatchProgress(
            hits_total=total.hits if total else 0,
            hits_complete=total.complete if total else 0,
            assignments_required=total.required if total else 0,
            assignments_valid=total.valid if total else 0,
            assignments_filtered=total.filtered if total else 0,
            assignments_in_flight=claims.in_flight[batch_id],
            median_seconds=medians.get(batch_id),
            reward=batch.reward,
            cost_so_far=costs[batch_id][0],
            cost_projected=costs[batch_id][1],
        )
    return progress


def _batches_progress(*, batches: Iterable[Batch], now: datetime | None = None) -> dict[int, BatchProgress]:
    now = now or timezone.now()
    by_id = {batch.pk: batch for batch in batches}
    ids = list(by_id)
    if not ids:
        return {}
    hit_totals: dict[int, tuple[int, int]] = {
        batch_id: (total, required or 0)
        for batch_id, total, required in HIT.objects.filter(batch_id__in=ids)
        .values("batch_id")
        .annotate(total=Count("id"), required=Sum("assignments_required"))
        .values_list("batch_id", "total", "required")
        .order_by()
    }
    assignment_totals: dict[int, tuple[int, int, int]] = {
        batch_id: (valid, filtered, in_flight)
        for batch_id, valid, filtered, in_flight in Assignment.objects.filter(hit__batch_id__in=ids)
        .values("hit__batch_id")
        .annotate(
            valid=Count("id", filter=VALID_ASSIGNMENT),
            filtered=Count("id", filter=Q(filtered=True)),
            in_flight=Count("id", filter=_in_flight(now)),
        )
        .values_list("hit__batch_id", "valid", "filtered", "in_flight")
        .order_by()
    }
    complete: dict[int, int] = defaultdict(int)
    for batch_id in (
        Assignment.objects.filter(VALID_ASSIGNMENT, hit__batch_id__in=ids)
        .values("hit_id", "hit__batch_id")
        .annotate(valid=Count("id"))
        .filter(valid__gte=F("hit__assignments_required"))
        .values_list("hit__batch_id", flat=True)
        .order_by()
    ):
        complete[batch_id] += 1
    medians = _median_seconds(ids)
    costs = _batch_costs(by_id)
    progress = {}
    for batch_id, batch in by_id.items():
        hits_total, required = hit_totals.get(batch_id, (0, 0))
        valid, filtered, in_flight = assignment_totals.get(batch_id, (0, 0, 0))
        progress[batch_id] = BatchProgress(
            hits_total=hits_total,
            hits_complete=complete[batch_id],
            assignments_required=required,
            assignments_valid=valid,
            assignments_filtered=filtered,
            assignments_in_flight=in_flight,
            median_seconds=medians.get(batch_id),
            reward=batch.reward,
            cost_so_far=costs[batch_id][0],
            cost_projected=costs[batch_id][1],
        )
    return progress


def _batch_costs(
    batches: dict[int, Batch],
    *,
    sizes: Mapping[int, Counter[int]] | None = None,
    valid: Mapping[int, Counter[int]] | None = None,
) -> dict[int, tuple[Decimal, Decimal]]:
    """(so far, projected) of each batch, priced by its crowd, in three grouped queries (one when
    ``sizes`` and ``valid`` are given: each batch's HITs and valid work by the HIT's required
    assignments; each batch's projection priced once per process, ``_projected_cost``).

    A HIT's size sets its fee (MTurk's higher rate from 10 assignments), so HITs and valid work are
    counted by batch and size; sent bonuses add with their fee to both figures."""
    from crowds.interface import get_backend
    from crowds.interface.costs import assignments_cost, bonus_cost

    ids = list(batches)
    # Sizes given: the figures kept per target, whose projections are kept per process too.
    kept = sizes is not None
    if sizes is None:
        sizes = defaultdict(Counter)
        for batch_id, size, count in (
            HIT.objects.filter(batch_id__in=ids)
            .values("batch_id", "assignments_required")
            .annotate(count=Count("id"))
            .values_list("batch_id", "assignments_required", "count")
            .order_by()
        ):
            sizes[batch_id][size] += count
    if valid is None:
        valid = defaultdict(Counter)
        for batch_id, size, count in (
            Assignment.objects.filter(VALID_ASSIGNMENT, hit__batch_id__in=ids)
            .values("hit__batch_id", "hit__assignments_required")
            .annotate(count=Count("id"))
            .values_list("hit__batch_id", "hit__assignments_required", "count")
            .order_by()
        ):
            valid[batch_id][size] += count
    bonuses: dict[int, list[Decimal]] = defaultdict(list)
    for batch_id, amount in shaped_rows(_sent_bonus_rows, ids):
        bonuses[batch_id].append(amount)
    costs = {}
    for batch_id, batch in batches.items():
        backend = get_backend(batch.backend)
        bonus_total = sum((bonus_cost(amount, backend.fees) for amount in bonuses[batch_id]), Decimal("0.00"))
        so_far = sum(
            (
                assignments_cost(reward=batch.reward, count=count, hit_size=size, fees=backend.fees)
                for size, count in sorted(valid.get(batch_id, Counter()).items())
            ),
            Decimal("0.00"),
        )
        batch_sizes = sizes.get(batch_id, Counter())
        if kept:
            projected = _projected_cost(backend, batch.reward, batch_sizes)
        else:
            hit_sizes = [size for size, count in sorted(batch_sizes.items()) for _ in range(count)]
            projected = backend.price(assignments_per_hit=hit_sizes, reward=batch.reward).total
        costs[batch_id] = (so_far + bonus_total, projected + bonus_total)
    return costs


# Each batch's projected cost as its crowd prices it, by the crowd's cost rule (its class and fee
# rule), the reward and the batch's HITs by size (``_projected_cost``).
_PROJECTED: dict[tuple[Any, ...], Decimal] = {}


def _projected_cost(backend: Any, reward: Decimal, sizes: Mapping[int, int]) -> Decimal:
    """What the crowd's ``price`` gives for every required assignment of HITs of these sizes (size ->
    HITs), remembered per process (at most ``BATCH_PRICES_KEPT``; docs/design.md §7, "Incremental
    figures"): ``price`` reads one size per HIT, tens of thousands for a large batch, and no submit
    changes a batch's HITs, so each batch is priced once until its HITs, reward or crowd change."""
    ordered = tuple(sorted(sizes.items()))
    key = (type(backend), getattr(backend, "fees", None), reward, ordered)
    kept = _PROJECTED.get(key)
    if kept is not None:
        return kept
    hit_sizes = [size for size, count in ordered for _ in range(count)]
    projected = backend.price(assignments_per_hit=hit_sizes, reward=reward).total
    limit = settings.BATCH_PRICES_KEPT
    if limit > 0:
        if len(_PROJECTED) >= limit:
            _PROJECTED.clear()
        _PROJECTED[key] = projected
    return projected


def batch_progress(*, batch: Batch, now: datetime | None = None) -> BatchProgress:
    """One batch's progress: the figures kept per change of the benchmark (``batches_progress``) with
    the work in flight read live, since a claim moves no change key (one statement over the claimed
    status's index, ``hits.selectors.shares.live_claims``). A batch's page and poll read it with its
    throughput in one statement (``hits.selectors.operations.batch_live``)."""
    progress = batches_progress(batches=[batch], now=now)[batch.pk]
    if now is not None:
        return progress  # counted now, claims included
    from hits.selectors.shares import live_claims

    in_flight = live_claims(benchmark_id=batch.benchmark_id, now=timezone.now()).in_flight[batch.pk]
    return dataclasses.replace(progress, assignments_in_flight=in_flight)


def batch_list(*, benchmark: Benchmark | None = None) -> QuerySet[Batch]:
    batches = Batch.objects.select_related("benchmark", "created_by").order_by("-created_at", "-id")
    return batches if benchmark is None else batches.filter(benchmark=benchmark)


def benchmark_batch_list(*, benchmark: Benchmark) -> list[Batch]:
    """``batch_list`` of one benchmark, built by the ORM once per process
    (``crowdlex.statements.shaped_objects``): the batches' page lists them after every change."""
    return shaped_objects(_benchmark_batches, benchmark.pk)


def _benchmark_batches(benchmark_id: int) -> QuerySet[Batch]:
    return batch_list().filter(benchmark_id=benchmark_id)


def batch_hits(*, batch: Batch, now: datetime | None = None) -> QuerySet[HIT]:
    """The HITs of a batch with their target and counts of valid and in-flight assignments."""
    now = now or timezone.now()
    return (
        HIT.objects.filter(batch=batch)
        .select_related("target")
        .annotate(
            assignments_valid=Count("assignments", filter=_valid("assignments__")),
            assignments_in_flight=Count("assignments", filter=_in_flight(now, "assignments__")),
        )
        .order_by("id")
    )


def batch_hits_page(*, batch: Batch, number: str | None, per_page: int) -> Page[Any]:
    """Page ``number`` of the batch's HITs in id order (the last one past the end, as
    ``Paginator.get_page``), each with ``batch_hits``' counts. The HITs are counted and the page's ids
    read on the HIT table alone, and only that page's HITs join their assignments: the counts are
    not computed for every HIT of the batch to show a hundred."""
    # The paginator reads its ``count()`` and a slice of it alone.
    page: Page[Any] = Paginator(_BatchHitIds(batch.pk), per_page).get_page(number)  # type: ignore[arg-type]
    # Only the values the page shows (hits.rows.batch_hit_rows): no HIT or target is built. Built by
    # the ORM once per process (``crowdlex.statements.shaped_rows``).
    rows = shaped_rows(_page_hit_rows, batch.pk, list(page.object_list), timezone.now())
    page.object_list = [dict(zip(_PAGE_HIT_COLUMNS, row, strict=True)) for row in rows]
    return page


class _BatchHitIds:
    """A batch's HIT ids in id order as ``Paginator`` reads them: counted, and a page's ids sliced.
    Both built by the ORM once per process (``crowdlex.statements.shaped_rows``); a slice's bounds
    are part of its statement's text, so a shape per page read, as many as the batch has pages (the
    last page read to the end, whatever the count)."""

    def __init__(self, batch_id: int) -> None:
        self.batch_id = batch_id
        self.counted: int | None = None

    def count(self) -> int:
        if self.counted is None:
            rows = shaped_rows(_batch_hit_count, self.batch_id)
            self.counted = rows[0][0] if rows else 0
        return self.counted

    def __getitem__(self, bounds: slice) -> list[int]:
        stop = "" if bounds.stop >= self.count() else bounds.stop
        return [pk for (pk,) in shaped_rows(_batch_hit_ids, self.batch_id, f"{bounds.start}:{stop}")]


def _batch_hit_count(batch_id: int) -> QuerySet[HIT, tuple[int]]:
    # Grouped by the batch: one row, or none without HITs.
    return HIT.objects.filter(batch_id=batch_id).values("batch_id").annotate(n=Count("pk")).values_list("n").order_by()


def _batch_hit_ids(batch_id: int, bounds: str) -> QuerySet[HIT, tuple[int]]:
    start, _, stop = bounds.partition(":")
    return (
        HIT.objects.filter(batch_id=batch_id).order_by("id").values_list("pk")[int(start) : int(stop) if stop else None]
    )


# The columns of a page of a batch's HITs (``batch_hits_page``).
_PAGE_HIT_COLUMNS = (
    "pk",
    "target_id",
    "target__word",
    "target__pos",
    "part",
    "assignments_required",
    "assignments_valid",
    "assignments_in_flight",
)


def _page_hit_rows(batch_id: int, hit_ids: list[int], now: datetime) -> QuerySet[HIT, tuple[Any, ...]]:
    hits = HIT.objects.filter(batch_id=batch_id, pk__in=hit_ids).order_by("id")
    return hits.annotate(
        assignments_valid=Count("assignments", filter=_valid("assignments__")),
        assignments_in_flight=Count("assignments", filter=_in_flight(now, "assignments__")),
    ).values_list(*_PAGE_HIT_COLUMNS)


def hit_with_items(*, hit_id: int) -> HIT:
    """One HIT with its batch, target, context and items in display order (raises HIT.DoesNotExist)."""
    return (
        HIT.objects.select_related("batch__benchmark", "target__context")
        .prefetch_related(Prefetch("items", queryset=HITItem.objects.select_related("candidate").order_by("position")))
        .get(pk=hit_id)
    )


def hit_assignments(*, hit: HIT) -> QuerySet[Assignment]:
    return (
        Assignment.objects.filter(hit=hit)
        .select_related("worker")
        .prefetch_related(Prefetch("answers", queryset=Answer.objects.order_by("item__position")))
        .order_by("id")
    )


@dataclass(frozen=True)
class AnswerRow:
    """An item and each assignment's answer to it (None where there is none), in the assignments' order."""

    item: HITItem
    answers: list[Answer | None]

    @property
    def values(self) -> list[str | None]:
        return [answer.value if answer is not None else None for answer in self.answers]


def hit_answer_table(*, hit: HIT, assignments: list[Assignment]) -> list[AnswerRow]:
    """One row per item (display order), one column per assignment; None where there is no answer."""
    answers = {(answer.assignment_id, answer.item_id): answer for a in assignments for answer in a.answers.all()}
    return [
        AnswerRow(item=item, answers=[answers.get((assignment.pk, item.pk)) for assignment in assignments])
        for item in hit.items.all()
    ]


def assignment_list() -> QuerySet[Assignment]:
    return Assignment.objects.select_related("worker", "hit__batch").order_by("id")


def batch_max_items(*, batch: Batch) -> int:
    """Items of the batch's largest HIT (positions count from 1 without gaps)."""
    return HITItem.objects.filter(hit__batch=batch).aggregate(most=Max("position"))["most"] or 0


def batch_export_rows(
    *, batch_id: int, chunk_size: int, after: int = 0
) -> tuple[Iterator[tuple[Any, ...]], Iterator[tuple[Any, ...]]]:
    """The batch's HITs in id order, (id, target id, word, part of speech, offset, part, context), and
    their items in the same HIT order then by position, (HIT id, position, text, candidate id, kind):
    two statements, each read ``chunk_size`` rows at a time (a server-side cursor on PostgreSQL), so
    the HITs CSV merges them as it writes and its statements do not grow with the batch. ``after``:
    only the HITs after that id, and their items (the rest of a download whose head was kept)."""
    hits = HIT.objects.filter(batch_id=batch_id)
    items = HITItem.objects.filter(hit__batch_id=batch_id)
    if after:
        hits, items = hits.filter(pk__gt=after), items.filter(hit_id__gt=after)
    hits_rows = hits.order_by("id").values_list(
        "pk", "target_id", "target__word", "target__pos", "target__offset", "part", "target__context__text"
    )
    items_rows = items.order_by("hit_id", "position").values_list("hit_id", "position", "text", "candidate_id", "kind")
    return hits_rows.iterator(chunk_size=chunk_size), items_rows.iterator(chunk_size=chunk_size)


# --- annotators' flags, for researchers ---


def hit_flags(*, hit: HIT) -> QuerySet[HITFlag]:
    """The flags annotators raised on a HIT, whole-HIT flags first, then by row."""
    return (
        HITFlag.objects.filter(assignment__hit=hit)
        .select_related("assignment__worker", "item__candidate")
        .order_by(F("item__position").asc(nulls_first=True), "created_at", "id")
    )


def benchmark_flag_count(*, benchmark: Benchmark) -> int:
    """How many flags ``benchmark_flags`` lists. Built by the ORM once per process
    (``crowdlex.statements.shaped_rows``): the benchmark page shows it after every change."""
    return shaped_count(HITFlag, "assignment__hit__batch__benchmark_id", benchmark.pk)


def benchmark_flags(*, benchmark: Benchmark) -> QuerySet[HITFlag]:
    """Every flag raised in a benchmark's HITs, by target, HIT and row."""
    return (
        HITFlag.objects.filter(assignment__hit__batch__benchmark=benchmark)
        .select_related("assignment__worker", "assignment__hit__target__context", "item__candidate")
        .order_by(
            "assignment__hit__target_id",
            "assignment__hit_id",
            F("item__position").asc(nulls_first=True),
            "created_at",
            "id",
        )
    )
