"""A benchmark's HITs and assignments as figures kept per target (docs/design.md §7, "Incremental
figures"): the pipeline's HITs, open slots and assignments by status, each batch's HITs, work,
completed HITs and costs, and the budget's committed free slots (hits/budget.py), without reading
every HIT and assignment of the benchmark after a submit.

Each target keeps its share of every batch that has HITs of it (``BatchShare``), brought up to date
by ``annotation.changes.benchmark_by_target`` for the targets a change touched: a submit names its
target (``RefreshTouched.target_ids``), a refresh, a return and an expiry name theirs, and anything
else (a batch created, closed, paused or resumed, a crowd's sync, a decision on work) counts every
target again. A claim moves no key (annotation.changes): live claims are read apart, every time the
figures are computed (``live_claims``: a few rows, on the claimed status's index), so the shares hold
no claimed work and what a claim changes (open slots, work in progress) is never older than the
figures it shows with.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from django.db.models import BooleanField, Count, Exists, ExpressionWrapper, F, OuterRef, Q, QuerySet

from annotation.changes import KeptFigures, benchmark_kept, computed_once
from annotation.models import TargetStage
from crowdlex.statements import shaped_rows
from hits.models import HIT, VALID_STATUSES, Assignment, AssignmentStatus, BatchStatus, RemoteHIT, confirmed

# hits.selectors.VALID_ASSIGNMENT, said here: the researcher's selectors read this module.
VALID_ASSIGNMENT = Q(status__in=VALID_STATUSES, filtered=False) & confirmed()


def _offered_condition(prefix: str) -> Q:
    """``hits.selectors.OFFERED_HIT``, of the HIT at ``prefix``."""
    return Q(**{f"{prefix}batch__status": BatchStatus.OPEN}) & ~Q(**{f"{prefix}target__stage": TargetStage.DONE})


def _offered(prefix: str) -> ExpressionWrapper:
    """``hits.selectors.OFFERED_HIT`` as a column, of the HIT at ``prefix``."""
    return ExpressionWrapper(_offered_condition(prefix), output_field=BooleanField())


class BatchShare(NamedTuple):
    """One target's share of one batch: its HITs (``sizes``: (required assignments, HITs) pairs),
    the valid work on them (``valid_sizes``: by the HIT's required assignments), the filtered work,
    the HITs whose required work is all in, the slots still free on the HITs the queue offers
    before live claims (required less valid work), the work by status, claims left out, and the
    slots free before live claims on the HITs the budget counts as committed (``budget_sizes``: by
    the HIT's required assignments; offered, and on a crowd posted there, hits/budget.py). Plain
    tuples: the shares of every target are stored in the shared cache after each change."""

    step: int
    hits: int
    required: int
    sizes: tuple[tuple[int, int], ...]
    valid: int
    valid_sizes: tuple[tuple[int, int], ...]
    filtered: int
    complete: int
    free: int
    statuses: tuple[tuple[str, int], ...]
    budget_sizes: tuple[tuple[int, int], ...]


@dataclass
class BatchTotal:
    """``BatchShare`` summed over targets (``batch_totals``), or a share being counted."""

    step: int
    hits: int = 0
    required: int = 0
    sizes: Counter[int] = field(default_factory=Counter)
    valid: int = 0
    valid_sizes: Counter[int] = field(default_factory=Counter)
    filtered: int = 0
    complete: int = 0
    free: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    budget_sizes: Counter[int] = field(default_factory=Counter)

    def add(self, share: BatchShare) -> None:
        self.hits += share.hits
        self.required += share.required
        self.valid += share.valid
        self.filtered += share.filtered
        self.complete += share.complete
        self.free += share.free
        # Item by item: Counter.update is slow for a pair or two, and this runs once per target.
        for size, count in share.sizes:
            self.sizes[size] += count
        for size, count in share.valid_sizes:
            self.valid_sizes[size] += count
        for status, count in share.statuses:
            self.statuses[status] += count
        for size, count in share.budget_sizes:
            self.budget_sizes[size] += count

    def take(self, share: BatchShare) -> None:
        """Take a target's share out of the total (``shares_less``)."""
        self.hits -= share.hits
        self.required -= share.required
        self.valid -= share.valid
        self.filtered -= share.filtered
        self.complete -= share.complete
        self.free -= share.free
        for counter, pairs in (
            (self.sizes, share.sizes),
            (self.valid_sizes, share.valid_sizes),
            (self.statuses, share.statuses),
            (self.budget_sizes, share.budget_sizes),
        ):
            for key, count in pairs:
                counter[key] -= count  # type: ignore[index]
                if not counter[key]:  # type: ignore[index]
                    del counter[key]  # type: ignore[attr-defined]

    def share(self) -> BatchShare:
        # Counts of none left out: a sum that took some targets' shares out of a larger one holds
        # what a sum of the others alone holds (a size, a status of no HIT or work is in neither).
        return BatchShare(
            step=self.step,
            hits=self.hits,
            required=self.required,
            sizes=tuple(sorted((size, count) for size, count in self.sizes.items() if count)),
            valid=self.valid,
            valid_sizes=tuple(sorted((size, count) for size, count in self.valid_sizes.items() if count)),
            filtered=self.filtered,
            complete=self.complete,
            free=self.free,
            statuses=tuple(sorted((status, count) for status, count in self.statuses.items() if count)),
            budget_sizes=tuple(sorted((size, free) for size, free in self.budget_sizes.items() if free)),
        )


def budgeted_condition(prefix: str) -> Q:
    """Whether the HIT at ``prefix`` counts in the budget's committed money while it has free slots
    (hits/budget.py): offered, and on a crowd that pays (``CrowdBackend.remote``) posted there."""
    from crowds.interface import remote_backend_names

    # The HIT's own id: its primary key, or the foreign key of the row that names it.
    hit_id = OuterRef(f"{prefix[:-2]}_id" if prefix else "pk")
    posted = Exists(RemoteHIT.objects.filter(hit=hit_id, round=0))
    return _offered_condition(prefix) & (~Q(**{f"{prefix}batch__backend__in": remote_backend_names()}) | Q(posted))


class HitWorkRows(NamedTuple):
    """Some targets' HITs and their work, grouped (``hit_work_rows``). ``hits``: (target, batch,
    step, batch closed, required assignments, offered, budgeted, HITs); ``work``, claims left out:
    (target, batch, required assignments, offered, budgeted, status, filtered, valid, assignments)."""

    hits: list[tuple[int, int, int, bool, int, bool, bool, int]]
    work: list[tuple[int, int, int, bool, bool, str, bool, bool, int]]


def hit_work_rows(benchmark_id: int, target_ids: list[int] | None) -> HitWorkRows:
    """The HITs of ``target_ids`` (every target when None) and their work, in two grouped statements,
    read once per computation of figures for the same targets (``annotation.changes.computed_once``):
    the figures kept per target that read them after a change (each batch's shares here, the
    pipeline's required and valid work, ``review.selectors.collected_work``) read the two tables once
    between them (docs/design.md §7, "Incremental figures")."""
    targets = "all" if target_ids is None else ",".join(str(target_id) for target_id in target_ids)
    return computed_once(f"hit-work-rows:{benchmark_id}:{targets}", lambda: _hit_work_rows(benchmark_id, target_ids))


def _hit_rows(benchmark_id: int, target_ids: list[int] | None) -> QuerySet[HIT, tuple[Any, ...]]:
    hits = HIT.objects.filter(batch__benchmark_id=benchmark_id)
    if target_ids is not None:
        hits = hits.filter(target_id__in=target_ids)
    closed = ExpressionWrapper(Q(batch__status=BatchStatus.CLOSED), output_field=BooleanField())
    return (
        hits.annotate(
            closed=closed,
            offered=_offered(""),
            budgeted=ExpressionWrapper(budgeted_condition(""), output_field=BooleanField()),
        )
        .values_list("target_id", "batch_id", "batch__step", "closed", "assignments_required", "offered", "budgeted")
        .annotate(count=Count("id"))
        .order_by()
    )


def _work_rows(benchmark_id: int, target_ids: list[int] | None) -> QuerySet[Assignment, tuple[Any, ...]]:
    work = Assignment.objects.filter(hit__batch__benchmark_id=benchmark_id).exclude(status=AssignmentStatus.CLAIMED)
    if target_ids is not None:
        work = work.filter(hit__target_id__in=target_ids)
    valid = ExpressionWrapper(VALID_ASSIGNMENT, output_field=BooleanField())
    columns: tuple[str, ...] = ("hit__target_id", "hit__batch_id", "hit__assignments_required", "offered")
    columns += ("budgeted", "status", "filtered", "is_valid")
    return (
        work.annotate(
            offered=_offered("hit__"),
            budgeted=ExpressionWrapper(budgeted_condition("hit__"), output_field=BooleanField()),
            is_valid=valid,
        )
        .values(*columns)
        .annotate(count=Count("id"))
        .values_list(*columns, "count")
        .order_by()
    )


def targets_rows(
    build: Callable[[int, list[int] | None], QuerySet[Any, tuple[Any, ...]]],
    benchmark_id: int,
    target_ids: list[int] | None,
) -> list[tuple[Any, ...]]:
    """The rows of ``build(benchmark_id, target_ids)`` (a function of those alone and of the crowds
    that pay, ``budgeted_condition``): for some targets, by the statement the ORM built once
    (``crowdlex.statements.shaped_rows``), as every submit's first reader reads them."""
    from crowds.interface import remote_backend_names

    return shaped_rows(build, benchmark_id, target_ids, key=tuple(remote_backend_names()))


def _hit_work_rows(benchmark_id: int, target_ids: list[int] | None) -> HitWorkRows:
    return HitWorkRows(
        hits=targets_rows(_hit_rows, benchmark_id, target_ids),  # type: ignore[arg-type]
        work=targets_rows(_work_rows, benchmark_id, target_ids),  # type: ignore[arg-type]
    )


def _complete_rows(benchmark_id: int, target_ids: list[int] | None) -> QuerySet[Assignment, tuple[Any, ...]]:
    complete = Assignment.objects.filter(VALID_ASSIGNMENT, hit__batch__benchmark_id=benchmark_id)
    if target_ids is not None:
        complete = complete.filter(hit__target_id__in=target_ids)
    return (
        complete.values("hit_id", "hit__target_id", "hit__batch_id")
        .annotate(valid=Count("id"))
        .filter(valid__gte=F("hit__assignments_required"))
        .values_list("hit__target_id", "hit__batch_id")
        .order_by()
    )


def _target_shares(benchmark_id: int, target_ids: list[int] | None) -> dict[int, dict[int, BatchShare]]:
    """Per target of ``target_ids`` (every target when None) with HITs: its share of each batch. Three
    grouped statements over the targets' HITs and their work, the first two shared with the
    pipeline's progress of the same targets (``hit_work_rows``)."""
    rows = hit_work_rows(benchmark_id, target_ids)
    shares: dict[int, dict[int, BatchTotal]] = {}
    for target_id, batch_id, step, _, size, offered, budgeted, count in rows.hits:
        share = shares.setdefault(target_id, {}).setdefault(batch_id, BatchTotal(step=step))
        share.hits += count
        share.required += size * count
        share.sizes[size] += count
        if offered:
            share.free += size * count
        if budgeted:
            share.budget_sizes[size] += size * count
    for target_id, batch_id, size, offered, budgeted, status, filtered, is_valid, count in rows.work:
        share = shares[target_id][batch_id]
        share.statuses[status] += count
        if filtered:
            share.filtered += count
        if is_valid:
            share.valid += count
            share.valid_sizes[size] += count
            if offered:
                share.free -= count
            if budgeted:
                share.budget_sizes[size] -= count
    for target_id, batch_id in targets_rows(_complete_rows, benchmark_id, target_ids):
        shares[target_id][batch_id].complete += 1
    return {
        target_id: {batch_id: total.share() for batch_id, total in by_batch.items()}
        for target_id, by_batch in shares.items()
    }


def shares_summed(shares: Iterable[dict[int, BatchShare]]) -> dict[int, BatchShare]:
    """Shares of batches summed by batch: of targets (a bucket of them), or of buckets. Pure."""
    totals: dict[int, BatchTotal] = {}
    for by_batch in shares:
        for batch_id, share in by_batch.items():
            total = totals.get(batch_id)
            if total is None:
                total = totals[batch_id] = BatchTotal(step=share.step)
            total.add(share)
    return {batch_id: total.share() for batch_id, total in sorted(totals.items())}


def shares_less(total: dict[int, BatchShare], shares: Iterable[dict[int, BatchShare]]) -> dict[int, BatchShare]:
    """``total`` (``shares_summed`` of some targets' shares) with the targets' shares ``shares`` taken
    out of it, exactly as ``shares_summed`` of the others gives it: every count is a whole number,
    and a target's share of a batch holds at least one of its HITs, and of each size, status and
    valid size it names, so a batch or an entry no target holds any more is one that counts none.
    Pure."""
    totals: dict[int, BatchTotal] = {}
    for by_batch in shares:
        for batch_id, share in by_batch.items():
            counted = totals.get(batch_id)
            if counted is None:
                counted = totals[batch_id] = BatchTotal(step=total[batch_id].step)
                counted.add(total[batch_id])
            counted.take(share)
    less = dict(total)
    for batch_id, counted in totals.items():
        if counted.hits:
            less[batch_id] = counted.share()
        else:
            del less[batch_id]
    return less


def target_shares(*, benchmark_id: int) -> KeptFigures[dict[int, BatchShare], dict[int, BatchShare]]:
    """Every target's share of each batch of the benchmark, kept per target (only the targets changed
    since the kept shares were read are counted again), with their sum by batch kept beside them
    (``KeptFigures.total``): a change reads and writes the buckets of the targets it touched, and
    brings the total up to date by taking their shares as kept out of it and adding their new ones
    (``shares_less``)."""
    return benchmark_kept(
        benchmark_id=benchmark_id,
        # Named apart from the shares kept before they held the budget's free slots, and before
        # their total was kept by difference (an index of either has each bucket's sum).
        name="hit-shares-sum",
        compute=lambda target_ids: _target_shares(benchmark_id, target_ids),
        summarise=shares_summed,
        combine=shares_summed,
        # Taken out and added by difference: a change reads no other target's shares.
        take=shares_less,
    )


@dataclass(frozen=True)
class LiveClaims:
    """A benchmark's live claims now: in all, by batch, still before their deadline by batch, and the
    local ones on HITs the queue offers by (step, target) (each holds one of its HIT's slots)."""

    total: int
    by_batch: Counter[int]
    in_flight: Counter[int]
    holding: Counter[tuple[int, int]]


def _claim_rows(benchmark_id: int, now: datetime) -> QuerySet[Assignment, tuple[Any, ...]]:
    local = ExpressionWrapper(Q(external_id=""), output_field=BooleanField())
    return (
        Assignment.objects.filter(status=AssignmentStatus.CLAIMED, hit__batch__benchmark_id=benchmark_id)
        .annotate(offered=_offered("hit__"), is_local=local)
        .values_list("hit__batch_id", "hit__batch__step", "hit__target_id", "offered", "is_local")
        .annotate(count=Count("id"), before_deadline=Count("id", filter=Q(deadline__gt=now)))
        .order_by()
    )


def live_claims(*, benchmark_id: int, now: datetime) -> LiveClaims:
    """The benchmark's claimed work now (one statement over the claimed status's index), read once
    per computation of figures (``annotation.changes.computed_once``: the pipeline's and the
    batches' figures of one page read the same claims)."""
    return computed_once(f"live-claims:{benchmark_id}", lambda: _live_claims(benchmark_id, now))


def _live_claims(benchmark_id: int, now: datetime) -> LiveClaims:
    total = 0
    by_batch: Counter[int] = Counter()
    in_flight: Counter[int] = Counter()
    holding: Counter[tuple[int, int]] = Counter()
    for batch_id, step, target_id, offered, is_local, count, before_deadline in shaped_rows(
        _claim_rows, benchmark_id, now
    ):
        total += count
        by_batch[batch_id] += count
        in_flight[batch_id] += before_deadline
        if offered and is_local:
            holding[(step, target_id)] += count
    return LiveClaims(total=total, by_batch=by_batch, in_flight=in_flight, holding=holding)


def batch_totals(summed: dict[int, BatchShare], batch_ids: Iterable[int]) -> dict[int, BatchTotal]:
    """The shares of ``batch_ids`` summed over the targets (``summed``: ``shares_summed`` of them; a
    batch without HITs is left out). Pure."""
    totals: dict[int, BatchTotal] = {}
    for batch_id in set(batch_ids):
        share = summed.get(batch_id)
        if share is not None:
            totals[batch_id] = total = BatchTotal(step=share.step)
            total.add(share)
    return totals
