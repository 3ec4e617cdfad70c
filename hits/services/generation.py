"""Batch and HIT generation (docs/design.md §3): one service for pages, API, admin and commands, and one
that the pipeline calls as targets move on to a later step. Both ask the benchmark's scheme what a
step still needs and how a target's HITs look, and write the result in bulk."""

from __future__ import annotations

import dataclasses
import logging
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from annotation.activity import activity_record
from annotation.models import ActivityKind, Benchmark, Target, Worker
from crowdlex.collector import collector_paused
from crowdlex.dialect import dialect
from crowdlex.progress import Progress
from crowds.interface import default_backend_name, get_backend, queue_backend_names
from hits.budget import BudgetExceeded, budget_check
from hits.design.services import design_options
from hits.models import HIT, Batch, BatchStatus, HITItem, HITReservation, new_public_token
from hits.notifications import benchmark_watch
from hits.services.planning import (
    BATCH_OPTIONS,
    MAX_ASSIGNMENTS_PER_HIT,
    BatchPlan,
    HitsGenerationError,
    batch_plan,
    collectable,
    plan_hits,
)
from schemes import get_scheme
from schemes.base import CandidateRef, PlannedHIT, PlannedItem

logger = logging.getLogger(__name__)

__all__ = [
    "BATCH_OPTIONS",
    "MAX_ASSIGNMENTS_PER_HIT",
    "BatchPlan",
    "HitsGenerationError",
    "batch_clone",
    "batch_plan",
    "hits_generate",
]

_BULK_SIZE = 5000


def _insert_items(rows: Iterable[tuple[int, int, PlannedItem]]) -> None:
    """Insert HIT items: COPY on PostgreSQL (several times faster than INSERT for ~50,000 rows),
    bulk_create elsewhere. Item positions count from 1."""
    if not dialect().bulk_copy:
        HITItem.objects.bulk_create(
            (
                HITItem(
                    hit_id=hit_id,
                    position=position,
                    kind=item.kind,
                    control=item.control,
                    candidate_id=item.candidate_id,
                    text=item.text,
                )
                for hit_id, position, item in rows
            ),
            batch_size=_BULK_SIZE,
        )
        return
    dialect().copy_rows(
        HITItem,
        ("hit", "position", "kind", "control", "candidate", "text"),
        ((hit_id, position, item.kind, item.control, item.candidate_id, item.text) for hit_id, position, item in rows),
        not_null=("kind", "text"),
    )


def _insert_hits(
    *, batch: Batch, plans: list[tuple[int, PlannedHIT]], assignees: Mapping[int, Sequence[int]]
) -> list[int]:
    """Insert the HITs of ``plans`` in order and return their ids (increasing, in plan order).

    On PostgreSQL the ids are taken from the table's sequence first and the rows written by COPY
    with them (bulk_create compiles an INSERT of every row, three times slower for ~5,000 HITs);
    elsewhere bulk_create returns them.
    """
    if not dialect().bulk_copy:
        hits = HIT.objects.bulk_create(
            [
                HIT(
                    batch=batch,
                    target_id=target_id,
                    part=plan.part,
                    assignments_required=plan.assignments or batch.assignments_per_hit,
                    reserved=target_id in assignees,
                )
                for target_id, plan in plans
            ],
            batch_size=_BULK_SIZE,
        )
        return [hit.pk for hit in hits]
    hit_ids = dialect().reserve_ids(HIT, len(plans))
    created_at = timezone.now()
    dialect().copy_rows(
        HIT,
        (
            "id",
            "batch",
            "target",
            "part",
            "assignments_required",
            "assignments_active",
            "external_id",
            "reserved",
            "created_at",
            "public_token",
        ),
        (
            (
                hit_id,
                batch.pk,
                target_id,
                plan.part,
                plan.assignments or batch.assignments_per_hit,
                0,
                "",
                target_id in assignees,
                created_at,
                new_public_token(),
            )
            for hit_id, (target_id, plan) in zip(hit_ids, plans, strict=True)
        ),
        not_null=("external_id",),
    )
    return hit_ids


def _write(
    *, batch: Batch, plans: list[tuple[int, PlannedHIT]], assignees: Mapping[int, Sequence[int]] | None = None
) -> None:
    """Bulk inserts: HITs first (ids come back from PostgreSQL), then their items; with
    ``assignees`` (target id -> worker ids) each HIT is reserved for its target's workers."""
    assignees = assignees or {}
    hit_ids = _insert_hits(batch=batch, plans=plans, assignees=assignees)
    HITReservation.objects.bulk_create(
        (
            HITReservation(hit_id=hit_id, worker_id=worker_id)
            for hit_id, (target_id, _) in zip(hit_ids, plans, strict=True)
            for worker_id in assignees.get(target_id, ())
        ),
        batch_size=_BULK_SIZE,
    )
    _insert_items(
        (hit_id, position, item)
        for hit_id, (_, plan) in zip(hit_ids, plans, strict=True)
        for position, item in enumerate(plan.items, start=1)
    )
    logger.info("batch %s: %s HITs added for %s targets", batch.pk, len(plans), len({t for t, _ in plans}))


def hits_generate(
    *,
    benchmark: Benchmark,
    step: int,
    seed: int,
    targets: Iterable[Target | int] | None = None,
    backend: str | None = None,
    assignments_per_hit: int | None = None,
    reward: Decimal | None = None,
    created_by: User | None = None,
    force: bool = False,
    annotators: Sequence[Worker] | None = None,
    overlap: int = 0,
    cloned_from: Batch | None = None,
    progress: Progress | None = None,
    candidates: Collection[int] | None = None,
    **batch_options: Any,
) -> Batch:
    """Create a batch of one of the scheme's steps with its HITs and their items, and return it (open).

    The benchmark's scheme (``schemes.get_scheme``) says what the step still needs
    (``work_for_step``: per target, the candidates lacking valid labels, or the target itself;
    labels the benchmark already has, imported or collected, are never collected again) and lays
    out each target's HITs (``planner``); the same seed gives the same HITs. ``targets`` None
    means every target of the benchmark. Each HIT asks for the labels its candidates lack (at most
    ``assignments_per_hit``). ``batch_plan`` plans it; ``hits.preview.batch_preview`` prices the same plan.

    A candidate (or a target that is itself the item) is collected in at most one non-closed batch
    per step, so that nothing is asked for twice by mistake:
    - with `targets` None, what a non-closed batch of the step holds is skipped (so the call picks
      up what is new, e.g. targets imported or advanced since the last batch);
    - with explicit `targets`, any such holding is an error naming the targets and batches,
      unless `force` is true (then all their work is generated again).
    A batch with no HIT is never created: that is an error saying why nothing needs collecting.

    ``candidates`` limits the batch to these candidates of the step's work (a system's substitutes
    sent to be judged, docs/evaluation.md); None: all of it.

    `assignments_per_hit` defaults to what the scheme collects per HIT in the step, `reward` to the
    benchmark's. `batch_options` sets other Batch fields (assignment_duration, lifetime, ...); a task
    design (``design``) and listing (title, description, keywords) not given come from the
    benchmark's template (``hits.design.design_options``, docs/design.md §4.1).

    With ``annotators``, the work goes to them by name (``hits.assignees``: each target to one of
    them, ``overlap`` targets to two), on the local queue: a target's HITs are reserved for its
    annotators and collect one assignment from each. A scheme whose work always goes to named
    annotators (``AnnotationScheme.assigned``, ProLex's experts) needs them.

    The activity log records the batch (``cloned_from``: the batch it copies, for the log's words).

    Concurrency: runs in one transaction holding a row lock on the benchmark, so two generations
    for one benchmark run one after the other and the second sees the first's HITs.

    Python's cyclic garbage collector is paused meanwhile (``crowdlex.collector``): the plan's
    objects live until they are written, and the collector would walk the whole process for them.
    """
    backend = backend or default_backend_name()
    with collector_paused(), transaction.atomic():
        benchmark = Benchmark.objects.select_for_update(no_key=True).get(pk=benchmark.pk)
        plan = batch_plan(
            benchmark=benchmark,
            step=step,
            seed=seed,
            targets=targets,
            backend=backend,
            assignments_per_hit=assignments_per_hit,
            reward=reward,
            force=force,
            annotators=annotators,
            overlap=overlap,
            progress=progress,
            candidates=candidates,
            **batch_options,
        )
        _within_cap_or_refuse(benchmark=benchmark, backend=plan.backend, reward=plan.reward, sizes=plan.hit_assignments)
        # A design not given (nor a listing) comes from the benchmark's template (docs/design.md §4.1).
        template = design_options(benchmark=benchmark, step=plan.step, given=batch_options)
        batch = Batch.objects.create(
            benchmark=benchmark,
            step=plan.step,
            backend=plan.backend,
            status=BatchStatus.OPEN,
            seed=plan.seed,
            assignments_per_hit=plan.assignments_per_hit,
            reward=plan.reward,
            created_by=created_by,
            **template,
            **batch_options,
        )
        _write(batch=batch, plans=plan.plans, assignees=plan.assignees)
        origin = f" as a clone of batch {cloned_from.pk}" if cloned_from is not None else ""
        activity_record(
            benchmark=benchmark,
            kind=ActivityKind.BATCH_CREATED,
            summary=f"batch {batch.pk} created{origin}: step {batch.step}, {len(plan.plans)} HITs for "
            f"{plan.targets} targets on {batch.get_backend_display()}, ${batch.reward} per assignment",
            by=created_by,
            result={
                "batch": batch.pk,
                "step": batch.step,
                "backend": batch.backend,
                "hits": len(plan.plans),
                "targets": plan.targets,
                "assignments": sum(plan.hit_assignments),
                "reward": str(batch.reward),
                **({"cloned_from": cloned_from.pk} if cloned_from is not None else {}),
            },
        )
        benchmark_watch(benchmark=benchmark)
    return batch


def _local_cost(*, backend: str, reward: Decimal, sizes: Sequence[int]) -> Decimal:
    """What HITs of these sizes commit when they are made: on a crowd nothing until published (the
    publish checks the cap then); the local queue offers them at once, at its price."""
    found = get_backend(backend)
    if found.remote:
        return Decimal(0)
    return found.price(assignments_per_hit=list(sizes), reward=reward).total


def _within_cap_or_refuse(*, benchmark: Benchmark, backend: str, reward: Decimal, sizes: Sequence[int]) -> None:
    """Refuse a local batch whose work would take the benchmark past its budget cap (docs/design.md §16)."""
    cost = _local_cost(backend=backend, reward=reward, sizes=sizes)
    try:
        budget_check(benchmark=benchmark, cost=cost, what=f"a batch of {len(sizes)} HITs on the local queue")
    except BudgetExceeded as error:
        raise HitsGenerationError(str(error)) from None


def batch_clone(
    *,
    batch: Batch,
    targets: Iterable[Target | int] | None = None,
    backend: str | None = None,
    created_by: User | None = None,
    force: bool = False,
) -> Batch:
    """A new batch with ``batch``'s settings (step, seed, assignments per HIT, reward, durations,
    texts, qualifications, review policy) for other ``targets`` (None: every target the step still
    needs outside open batches) or on another ``backend`` (None: the same). Work the batch holds
    while open is not asked for twice: explicit targets it holds are refused unless ``force``.
    Named annotators (reserved HITs, ProLex's experts) go with the clone, on the local queue.
    """
    reserved = list(Worker.objects.filter(reservations__hit__batch=batch).distinct().order_by("pk"))
    return hits_generate(
        benchmark=batch.benchmark,
        step=batch.step,
        seed=batch.seed,
        targets=targets,
        backend=backend or batch.backend,
        assignments_per_hit=None if reserved else batch.assignments_per_hit,
        reward=batch.reward,
        created_by=created_by,
        force=force,
        annotators=reserved or None,
        cloned_from=batch,
        **{name: getattr(batch, name) for name in BATCH_OPTIONS},
    )


def _followup_existing(*, benchmark: Benchmark, step: int, parent: Batch | None) -> Batch | None:
    """The open batch of ``step`` that follows ``parent`` already, if any (see ``_followup_batch``)."""
    open_batches = Batch.objects.filter(benchmark=benchmark, step=step, parent=parent).exclude(
        status=BatchStatus.CLOSED
    )
    if parent is None:
        open_batches = open_batches.filter(backend__in=queue_backend_names())
    return open_batches.order_by("pk").first()


def _followup_batch(*, benchmark: Benchmark, step: int, assignments_per_hit: int, parent: Batch | None) -> Batch:
    """The open batch of ``step`` that follows ``parent``, made now if there is none.

    A new one takes its parent's settings as they are now. Targets whose earlier step was all
    imported have no parent: theirs is any open parentless local batch of the step, else a new one
    with the benchmark's settings.
    """
    existing = _followup_existing(benchmark=benchmark, step=step, parent=parent)
    if existing is not None:
        return existing
    if parent is None:
        made = Batch.objects.create(
            benchmark=benchmark,
            step=step,
            seed=benchmark.seed,
            assignments_per_hit=assignments_per_hit,
            reward=benchmark.reward,
            **design_options(benchmark=benchmark, step=step),
        )
        _followup_record(made, "for targets whose earlier step was imported")
        return made
    # What the crowd needs to reach the workers of the earlier step goes with the parent's settings.
    inherited = get_backend(parent.backend).inherited_settings
    endpoint = {key: parent.external[key] for key in inherited if key in parent.external}
    made = Batch.objects.create(
        benchmark=benchmark,
        step=step,
        parent=parent,
        backend=parent.backend,
        seed=parent.seed,
        assignments_per_hit=assignments_per_hit,
        reward=parent.reward,
        created_by=parent.created_by,
        external=endpoint,
        **{name: getattr(parent, name) for name in BATCH_OPTIONS},
    )
    _followup_record(made, f"for the targets of batch {parent.pk} that moved on")
    return made


def _followup_record(batch: Batch, why: str) -> None:
    """The pipeline made a follow-up batch: the platform's own entry in the activity log."""
    activity_record(
        benchmark=batch.benchmark_id,
        kind=ActivityKind.BATCH_CREATED,
        summary=f"batch {batch.pk} (step {batch.step}) created by the pipeline {why}",
        result={"batch": batch.pk, "step": batch.step, "backend": batch.backend, "parent": batch.parent_id},
    )


def _followup_refusal(*, benchmark: Benchmark, backend: str, reward: Decimal, sizes: Sequence[int], into: str) -> str:
    """Why follow-up HITs of these sizes are not added ``into`` a batch (the budget cap,
    docs/design.md §16), recorded in the activity log; empty when they may be. Checked before any
    batch is made, so a refusal leaves none behind. Only local HITs commit money here; a crowd's are
    checked when they are published."""
    try:
        budget_check(
            benchmark=benchmark,
            cost=_local_cost(backend=backend, reward=reward, sizes=sizes),
            what=f"adding {len(sizes)} follow-up HITs to {into}",
        )
    except BudgetExceeded as error:
        activity_record(
            benchmark=benchmark,
            kind=ActivityKind.BUDGET_REFUSED,
            summary=f"the pipeline did not add follow-up HITs: {error}"[:500],
            result={"refused": "budget cap", "hits": len(sizes)},
        )
        return str(error)
    return ""


def _queue_publish(batch: Batch) -> None:
    """Tell the batch's crowd, after commit, that it holds HITs not yet offered there."""
    transaction.on_commit(lambda: get_backend(batch.backend).hits_added(batch_id=batch.pk))


def followup_batches_extend(*, benchmark: Benchmark, step: int, targets: Iterable[int]) -> list[Batch]:
    """Give targets that just moved on to ``step`` their HITs, in the follow-up batch of the batch
    that held them in the step before (docs/design.md §3: SWORDS has one step-3 batch per step-2 batch).

    The first target to move on from a batch makes its follow-up, with the parent's settings at
    that moment (backend, endpoint, seed, reward, review policy, durations, texts, qualifications)
    and the scheme's assignments per HIT for the step; later targets add their HITs to it while it
    is open (once it is closed, a new one is made). A target's parent is the latest batch of the
    step before that holds its HITs; targets whose earlier step was all imported share one
    parentless local batch.

    On a crowd that pays, the new HITs are published after commit when the parent has been
    published, to the parent's endpoint: the researcher who published the earlier step has started
    the collection. An unpublished parent's follow-up waits to be published, as its parent does.

    HITs are planned as ``hits_generate`` plans them: only what the step still needs, none already
    in an open batch of the step. Runs in the caller's transaction (the pipeline's refresh holds
    the benchmark's row lock) and returns the batches that got HITs.
    """
    own = get_scheme(benchmark)
    numbers = [known.number for known in own.steps]
    if step not in numbers[1:]:
        raise HitsGenerationError(f"step {step} does not follow another step in {own.title}")
    previous = numbers[numbers.index(step) - 1]
    scheme = get_scheme(benchmark, step=step)
    settings = scheme.settings(benchmark)
    assignments_per_hit = scheme.assignments_per_hit(settings, step)
    target_ids = sorted(set(targets))
    extended: list[Batch] = []
    with transaction.atomic():
        benchmark = Benchmark.objects.select_for_update(no_key=True).get(pk=benchmark.pk)
        parent_of: dict[int, int | None] = dict.fromkeys(target_ids)
        for target_id, batch_id in (
            HIT.objects.filter(target_id__in=target_ids, batch__step=previous)
            .values_list("target_id", "batch_id")
            .order_by("batch_id")
        ):
            parent_of[target_id] = batch_id
        parents = Batch.objects.in_bulk({parent_id for parent_id in parent_of.values() if parent_id is not None})
        found = collectable(
            scheme=scheme,
            settings=settings,
            benchmark=benchmark,
            step=step,
            target_ids=target_ids,
            assignments_per_hit=assignments_per_hit,
            held="skip",
        )
        groups: dict[int | None, dict[int, list[CandidateRef]]] = defaultdict(dict)
        for target_id, candidates in found.by_target.items():
            groups[parent_of[target_id]][target_id] = candidates
        for parent_id, by_target in sorted(groups.items(), key=lambda item: item[0] or 0):
            parent = parents[parent_id] if parent_id is not None else None
            existing = _followup_existing(benchmark=benchmark, step=step, parent=parent)
            # What the batch is or will be (a new one takes its parent's settings, or the benchmark's).
            like = existing or parent
            seed = like.seed if like is not None else benchmark.seed
            plans = plan_hits(
                scheme=scheme, settings=settings, benchmark=benchmark, step=step, seed=seed, by_target=by_target
            )
            # A target back for another round (a stopping policy's) numbers its new HITs after its old ones.
            taken = dict(
                HIT.objects.filter(batch=existing, target_id__in=list(by_target))
                .values("target_id")
                .annotate(parts=Max("part"))
                .values_list("target_id", "parts")
                if existing is not None
                else []
            )
            if taken:
                plans = [
                    (target_id, dataclasses.replace(plan, part=plan.part + taken[target_id] + 1))
                    if target_id in taken
                    else (target_id, plan)
                    for target_id, plan in plans
                ]
            refusal = _followup_refusal(
                benchmark=benchmark,
                backend=like.backend if like is not None else default_backend_name(),
                reward=like.reward if like is not None else benchmark.reward,
                sizes=[plan.assignments or assignments_per_hit for _, plan in plans],
                into=f"batch {existing.pk}"
                if existing is not None
                else f"a follow-up of batch {parent_id}"
                if parent_id is not None
                else "a new follow-up batch",
            )
            if refusal:
                continue
            batch = existing or _followup_batch(
                benchmark=benchmark, step=step, assignments_per_hit=assignments_per_hit, parent=parent
            )
            _write(batch=batch, plans=plans)
            if parent is not None and "published_at" in parent.external:
                _queue_publish(batch)
            extended.append(batch)
    return extended
