"""Batch and HIT generation (DESIGN §3): one service for pages, API, admin and commands, and one
that the pipeline calls as targets move on to a later step. Both ask the benchmark's scheme what a
step still needs and how a target's HITs look, and write the result in bulk."""

from __future__ import annotations

import dataclasses
import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

from django.contrib.auth.models import User
from django.db import connection, transaction

from annotation.models import Benchmark, Target, Worker
from crowdlex.bulk import copy_rows
from crowdlex.progress import Progress
from hits.assignees import AssigneesError, assignees_plan
from hits.models import HIT, Backend, Batch, BatchStatus, HITItem, HITReservation
from hits.selectors import open_batch_holdings
from hits.tasks import batch_publish_task
from schemes import get_scheme
from schemes.base import (
    AnnotationScheme,
    CandidateRef,
    PlannedHIT,
    PlannedItem,
    SchemeSettings,
    StepWork,
    TargetRef,
    main_step,
)

logger = logging.getLogger(__name__)

# Batch fields a caller may set besides the named arguments; follow-up batches copy them from their parent.
BATCH_OPTIONS = frozenset(
    {
        "assignment_duration",
        "lifetime",
        "auto_approval_delay",
        "title",
        "description",
        "keywords",
        "qualifications",
        # What a paid crowd is told about filtered work (hits.crowd.publishing).
        "filtered_policy",
        "rejection_message",
    }
)
# SWORDS needs 10 labels per candidate in all; a hundred per HIT is far beyond any real use.
MAX_ASSIGNMENTS_PER_HIT = 100
_BULK_SIZE = 5000


class HitsGenerationError(ValueError):
    """The batch cannot be generated as asked; the message says why and what to change."""


def _target_ids(*, benchmark: Benchmark, targets: Iterable[Target | int]) -> list[int]:
    ids = sorted({target.pk if isinstance(target, Target) else int(target) for target in targets})
    if not ids:
        raise HitsGenerationError("the list of targets is empty; leave it out to take every target of the step")
    found = set(Target.objects.filter(benchmark=benchmark, id__in=ids).values_list("id", flat=True))
    missing = [target_id for target_id in ids if target_id not in found]
    if missing:
        raise HitsGenerationError(
            f"targets {', '.join(map(str, missing))} do not exist in benchmark {benchmark.name!r}"
        )
    return ids


def _insert_items(rows: Iterable[tuple[int, int, PlannedItem]]) -> None:
    """Insert HIT items: COPY on PostgreSQL (several times faster than INSERT for ~50,000 rows),
    bulk_create elsewhere. Item positions count from 1."""
    if connection.vendor != "postgresql":
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
    copy_rows(
        HITItem,
        ("hit", "position", "kind", "control", "candidate", "text"),
        ((hit_id, position, item.kind, item.control, item.candidate_id, item.text) for hit_id, position, item in rows),
        not_null=("kind", "text"),
    )


@dataclass
class _Collectable:
    """What a new batch of one step would collect, by target, and why the rest is left out."""

    work: StepWork
    by_target: dict[int, list[CandidateRef]] = field(default_factory=dict)
    # Candidates, and targets that are themselves the item, left to the open batch of the step holding them.
    candidates_in_open_batches: int = 0
    targets_in_open_batches: int = 0
    # Target id -> open batches holding some of its work (explicit targets, without force).
    conflicts: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))


def _collectable(
    *,
    scheme: AnnotationScheme,
    settings: SchemeSettings,
    benchmark: Benchmark,
    step: int,
    target_ids: list[int] | None,
    assignments_per_hit: int,
    held: Literal["skip", "conflict", "take"],
) -> _Collectable:
    """What a batch of ``step`` collects: what the scheme says the step still needs, each candidate
    asking for the labels it lacks (at most ``assignments_per_hit``). Work an open batch of the step
    holds is left to it (``held="skip"``), reported as a conflict, or taken all the same."""
    work = scheme.work_for_step(benchmark=benchmark, settings=settings, step=step, target_ids=target_ids)
    held_candidates, held_targets = open_batch_holdings(benchmark=benchmark, step=step, target_ids=target_ids)
    result = _Collectable(work=work)
    for target_id, candidates in sorted(work.by_target.items()):
        kept: list[CandidateRef] = []
        holders = [held_targets[target_id]] if not candidates and target_id in held_targets else []
        if holders and held == "skip":
            result.targets_in_open_batches += 1
            continue
        for candidate in candidates:
            if candidate.id in held_candidates:
                holders.append(held_candidates[candidate.id])
                if held == "skip":
                    result.candidates_in_open_batches += 1
                    continue
            kept.append(
                candidate._replace(assignments=min(assignments_per_hit, candidate.assignments or assignments_per_hit))
            )
        if holders and held == "conflict":
            result.conflicts[target_id].update(holders)
        if kept or not candidates:
            result.by_target[target_id] = kept
    return result


def _nothing_to_collect(*, benchmark: Benchmark, step: int, found: _Collectable, chosen: bool) -> str:
    reasons = []
    if found.work.settled:
        reasons.append(f"{found.work.settled:,} {found.work.settled_reason}")
    for count, what in ((found.candidates_in_open_batches, "candidates"), (found.targets_in_open_batches, "targets")):
        if count:
            reasons.append(f"{count:,} {what} are being collected by open batches of the step")
    return (
        f"nothing needs collecting in step {step} of benchmark {benchmark.name!r}"
        + (" for the chosen targets" if chosen else "")
        + ": "
        + ("; ".join(reasons) or f"nothing is at step {step}{found.work.empty_hint}")
    )


def _plan(
    *,
    scheme: AnnotationScheme,
    settings: SchemeSettings,
    benchmark: Benchmark,
    step: int,
    seed: int,
    by_target: dict[int, list[CandidateRef]],
    progress: Progress | None = None,
) -> list[tuple[int, PlannedHIT]]:
    """The HITs of each target, as the scheme's planner lays them out (seeded by ``seed``);
    ``progress(targets planned, targets)`` as it goes."""
    plan_target = scheme.planner(
        benchmark=benchmark, settings=settings, step=step, seed=seed, target_ids=sorted(by_target)
    )
    plans: list[tuple[int, PlannedHIT]] = []
    target_rows = Target.objects.filter(id__in=by_target.keys()).order_by("id")
    rows = target_rows.values_list("id", "word", "lemma", "pos", "offset", "context__digest", "context__text")
    for done, row in enumerate(rows, start=1):
        target = TargetRef(*row)
        plans.extend((target.id, hit) for hit in plan_target(target, by_target[target.id]))
        if progress is not None:
            progress(done, len(by_target))
    return plans


def _write(
    *, batch: Batch, plans: list[tuple[int, PlannedHIT]], assignees: Mapping[int, Sequence[int]] | None = None
) -> None:
    """Bulk inserts: HITs first (ids come back from PostgreSQL), then their items; with
    ``assignees`` (target id -> worker ids) each HIT is reserved for its target's workers."""
    assignees = assignees or {}
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
    HITReservation.objects.bulk_create(
        (
            HITReservation(hit=hit, worker_id=worker_id)
            for hit in hits
            for worker_id in assignees.get(hit.target_id, ())
        ),
        batch_size=_BULK_SIZE,
    )
    _insert_items(
        (hit.pk, position, item)
        for hit, (_, plan) in zip(hits, plans, strict=True)
        for position, item in enumerate(plan.items, start=1)
    )
    logger.info("batch %s: %s HITs added for %s targets", batch.pk, len(plans), len({t for t, _ in plans}))


def hits_generate(
    *,
    benchmark: Benchmark,
    step: int,
    seed: int,
    targets: Iterable[Target | int] | None = None,
    backend: str = Backend.LOCAL,
    assignments_per_hit: int | None = None,
    reward: Decimal | None = None,
    created_by: User | None = None,
    force: bool = False,
    annotators: Sequence[Worker] | None = None,
    overlap: int = 0,
    progress: Progress | None = None,
    **batch_options: Any,
) -> Batch:
    """Create a batch of one of the scheme's steps with its HITs and their items, and return it (open).

    The benchmark's scheme (``schemes.get_scheme``) says what the step still needs
    (``work_for_step``: per target, the candidates lacking valid labels, or the target itself;
    labels the benchmark already has, imported or collected, are never collected again) and lays
    out each target's HITs (``planner``); the same seed gives the same HITs. ``targets`` None
    means every target of the benchmark. Each HIT asks for the labels its candidates lack (at most
    ``assignments_per_hit``).

    A candidate (or a target that is itself the item) is collected in at most one non-closed batch
    per step, so that nothing is asked for twice by mistake:
    - with `targets` None, what a non-closed batch of the step holds is skipped (so the call picks
      up what is new, e.g. targets imported or advanced since the last batch);
    - with explicit `targets`, any such holding is an error naming the targets and batches,
      unless `force` is true (then all their work is generated again).
    A batch with no HIT is never created: that is an error saying why nothing needs collecting.

    `assignments_per_hit` defaults to what the scheme collects per HIT in the step, `reward` to the
    benchmark's. `batch_options` sets other Batch fields (assignment_duration, lifetime, ...).

    With ``annotators``, the work goes to them by name (``hits.assignees``: each target to one of
    them, ``overlap`` targets to two), on the local queue: a target's HITs are reserved for its
    annotators and collect one assignment from each. A scheme whose work always goes to named
    annotators (``AnnotationScheme.assigned``, ProLex's experts) needs them.

    Concurrency: runs in one transaction holding a row lock on the benchmark, so two generations
    for one benchmark run one after the other and the second sees the first's HITs.
    """
    own = get_scheme(benchmark)
    steps = [known.number for known in own.steps]
    if step not in steps:
        raise HitsGenerationError(f"step must be one of {', '.join(map(str, steps))} in {own.title}, got {step!r}")
    # The scheme that runs the step: the benchmark's, or the one it hands the step to (generation).
    scheme = get_scheme(benchmark, step=step)
    if backend not in Backend.values:
        raise HitsGenerationError(f"backend must be one of {', '.join(Backend.values)}, got {backend!r}")
    unknown = sorted(set(batch_options) - BATCH_OPTIONS)
    if unknown:
        raise HitsGenerationError(f"unknown batch options: {', '.join(unknown)}")
    if scheme.assigned and annotators is None:
        raise HitsGenerationError(
            f"{scheme.title} assigns its work to named annotators: name them, and how many targets two of them share"
        )
    if annotators is not None and backend != Backend.LOCAL:
        raise HitsGenerationError("work assigned to named annotators is collected on the local queue")
    if annotators is None and overlap:
        raise HitsGenerationError("an overlap is shared by named annotators: name them")
    settings = scheme.settings(benchmark)
    if assignments_per_hit is None:
        assignments_per_hit = scheme.assignments_per_hit(settings, step)
    if assignments_per_hit < 1:
        raise HitsGenerationError(
            f"assignments per HIT must be at least 1, got {assignments_per_hit}"
            + (
                f" (benchmark {benchmark.name!r} collects nothing in step {step})"
                if step != main_step(own.steps)
                else ""
            )
        )
    if assignments_per_hit > MAX_ASSIGNMENTS_PER_HIT:
        raise HitsGenerationError(
            f"assignments per HIT must be at most {MAX_ASSIGNMENTS_PER_HIT}, got {assignments_per_hit}"
        )
    # str() first, so that a float such as 0.1 means ten cents rather than its binary expansion.
    reward = benchmark.reward if reward is None else Decimal(str(reward))
    if reward < 0:
        raise HitsGenerationError(f"reward must not be negative, got {reward}")

    with transaction.atomic():
        benchmark = Benchmark.objects.select_for_update().get(pk=benchmark.pk)
        target_ids = None if targets is None else _target_ids(benchmark=benchmark, targets=targets)
        found = _collectable(
            scheme=scheme,
            settings=settings,
            benchmark=benchmark,
            step=step,
            target_ids=target_ids,
            assignments_per_hit=assignments_per_hit,
            held="skip" if target_ids is None else "take" if force else "conflict",
        )
        if found.conflicts:
            detail = "; ".join(
                f"target {target_id} in batch {', '.join(map(str, sorted(batch_ids)))}"
                for target_id, batch_ids in sorted(found.conflicts.items())
            )
            raise HitsGenerationError(
                f"some targets already have step-{step} HITs in an open batch ({detail}); "
                "close that batch or generate again with force"
            )
        if not found.by_target:
            raise HitsGenerationError(
                _nothing_to_collect(benchmark=benchmark, step=step, found=found, chosen=target_ids is not None)
            )
        plans = _plan(
            scheme=scheme,
            settings=settings,
            benchmark=benchmark,
            step=step,
            seed=seed,
            by_target=found.by_target,
            progress=progress,
        )
        assignees: dict[int, tuple[int, ...]] | None = None
        if annotators is not None:
            try:
                assignees = assignees_plan(
                    target_ids=sorted(found.by_target),
                    worker_ids=[worker.pk for worker in annotators],
                    overlap=overlap,
                    seed=seed,
                )
            except AssigneesError as error:
                raise HitsGenerationError(str(error)) from error
            plans = [
                (target_id, dataclasses.replace(plan, assignments=len(assignees[target_id])))
                for target_id, plan in plans
            ]
            assignments_per_hit = 2 if overlap else 1
        batch = Batch.objects.create(
            benchmark=benchmark,
            step=step,
            backend=backend,
            status=BatchStatus.OPEN,
            seed=seed,
            assignments_per_hit=assignments_per_hit,
            reward=reward,
            created_by=created_by,
            **batch_options,
        )
        _write(batch=batch, plans=plans, assignees=assignees)
    return batch


def _followup_batch(*, benchmark: Benchmark, step: int, assignments_per_hit: int, parent: Batch | None) -> Batch:
    """The open batch of ``step`` that follows ``parent``, made now if there is none.

    A new one takes its parent's settings as they are now. Targets whose earlier step was all
    imported have no parent: theirs is any open parentless local batch of the step, else a new one
    with the benchmark's settings.
    """
    open_batches = Batch.objects.filter(benchmark=benchmark, step=step, parent=parent).exclude(
        status=BatchStatus.CLOSED
    )
    if parent is None:
        open_batches = open_batches.filter(backend=Backend.LOCAL)
    existing = open_batches.order_by("pk").first()
    if existing is not None:
        return existing
    if parent is None:
        return Batch.objects.create(
            benchmark=benchmark,
            step=step,
            seed=benchmark.seed,
            assignments_per_hit=assignments_per_hit,
            reward=benchmark.reward,
        )
    # The endpoint goes with the parent, so the follow-up HITs reach the workers of the earlier step.
    endpoint = {key: parent.external[key] for key in ("environment",) if key in parent.external}
    return Batch.objects.create(
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


def _queue_publish(batch_id: int) -> None:
    transaction.on_commit(lambda: batch_publish_task.delay(batch_id))


def followup_batches_extend(*, benchmark: Benchmark, step: int, targets: Iterable[int]) -> list[Batch]:
    """Give targets that just moved on to ``step`` their HITs, in the follow-up batch of the batch
    that held them in the step before (DESIGN §3: SWORDS has one step-3 batch per step-2 batch).

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
        benchmark = Benchmark.objects.select_for_update().get(pk=benchmark.pk)
        parent_of: dict[int, int | None] = dict.fromkeys(target_ids)
        for target_id, batch_id in (
            HIT.objects.filter(target_id__in=target_ids, batch__step=previous)
            .values_list("target_id", "batch_id")
            .order_by("batch_id")
        ):
            parent_of[target_id] = batch_id
        parents = Batch.objects.in_bulk({parent_id for parent_id in parent_of.values() if parent_id is not None})
        found = _collectable(
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
            batch = _followup_batch(
                benchmark=benchmark, step=step, assignments_per_hit=assignments_per_hit, parent=parent
            )
            plans = _plan(
                scheme=scheme, settings=settings, benchmark=benchmark, step=step, seed=batch.seed, by_target=by_target
            )
            _write(batch=batch, plans=plans)
            if parent is not None and "published_at" in parent.external:
                _queue_publish(batch.pk)
            extended.append(batch)
    return extended
