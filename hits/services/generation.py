"""Batch and HIT generation (DESIGN §3): one service, called by pages, API, admin and commands."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db import connection, transaction

from annotation.models import Benchmark, Target
from crowdlex.bulk import copy_rows
from hits.models import HIT, Backend, Batch, BatchStatus, HITItem
from schemes import get_scheme
from schemes.base import CandidateRef, PlannedHIT, PlannedItem, TargetRef

logger = logging.getLogger(__name__)

# Batch fields a caller may set besides the named arguments; step-3 batches copy them from step 2.
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


def _held_by_open_batches(
    *, benchmark: Benchmark, step: int, target_ids: list[int] | None
) -> tuple[dict[int, int], dict[int, int]]:
    """What non-closed batches of this step already collect: candidate id -> batch id, and, for
    schemes whose item is the target itself, target id -> batch id."""
    items = HITItem.objects.filter(hit__batch__benchmark=benchmark, hit__batch__step=step).exclude(
        hit__batch__status=BatchStatus.CLOSED
    )
    if target_ids is not None:
        items = items.filter(hit__target_id__in=target_ids)
    candidates: dict[int, int] = {}
    targets: dict[int, int] = {}
    for candidate_id, target_id, batch_id in items.values_list("candidate_id", "hit__target_id", "hit__batch_id"):
        if candidate_id is not None:
            candidates[candidate_id] = batch_id
        targets[target_id] = batch_id
    return candidates, targets


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
    **batch_options: Any,
) -> Batch:
    """Create a batch of one of the scheme's steps with its HITs and their items, and return it (open).

    The benchmark's scheme (``schemes.get_scheme``) says what the step collects
    (``work_for_step``: per target, the candidates still waiting for it, or the target itself) and
    lays out each target's HITs (``planner``); the same seed gives the same HITs. ``targets`` None
    means every target of the benchmark.

    A candidate is collected in at most one non-closed batch per step, so that a target's labels
    are not asked for twice by mistake:
    - with `targets` None, candidates already in a non-closed batch of the step are skipped (so the
      call picks up what is new, e.g. targets imported or advanced since the last batch);
    - with explicit `targets`, any such candidate is an error naming the targets and batches,
      unless `force` is true (then all their candidates are generated again).
    A batch with no HIT is never created: that is an error too.

    `assignments_per_hit` defaults to what the scheme collects per HIT in the step, `reward` to the
    benchmark's. `batch_options` sets other Batch fields (assignment_duration, lifetime, ...).

    Concurrency: runs in one transaction holding a row lock on the benchmark, so two generations
    for one benchmark run one after the other and the second sees the first's HITs.
    Writes are bulk inserts: HITs first (ids come back from PostgreSQL), then their items.
    """
    scheme = get_scheme(benchmark)
    steps = [step.number for step in scheme.steps]
    if step not in steps:
        raise HitsGenerationError(f"step must be one of {', '.join(map(str, steps))} in {scheme.title}, got {step!r}")
    if backend not in Backend.values:
        raise HitsGenerationError(f"backend must be one of {', '.join(Backend.values)}, got {backend!r}")
    unknown = sorted(set(batch_options) - BATCH_OPTIONS)
    if unknown:
        raise HitsGenerationError(f"unknown batch options: {', '.join(unknown)}")
    settings = scheme.settings(benchmark)
    if assignments_per_hit is None:
        assignments_per_hit = scheme.assignments_per_hit(settings, step)
    if assignments_per_hit < 1:
        raise HitsGenerationError(
            f"assignments per HIT must be at least 1, got {assignments_per_hit}"
            + (f" (benchmark {benchmark.name!r} collects nothing in step {step})" if step != steps[0] else "")
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

        waiting = scheme.work_for_step(benchmark=benchmark, settings=settings, step=step, target_ids=target_ids)
        held_candidates, held_targets = _held_by_open_batches(benchmark=benchmark, step=step, target_ids=target_ids)
        candidates_by_target: dict[int, list[CandidateRef]] = {}
        conflicts: dict[int, set[int]] = defaultdict(set)
        for target_id, candidates in waiting.items():
            if not candidates and target_id in held_targets:
                # The target itself is the item, and an open batch already collects it.
                if target_ids is None:
                    continue
                conflicts[target_id].add(held_targets[target_id])
            kept = []
            for candidate in candidates:
                if candidate.id in held_candidates:
                    if target_ids is None:
                        continue
                    conflicts[target_id].add(held_candidates[candidate.id])
                kept.append(candidate)
            if kept or not candidates:
                candidates_by_target[target_id] = kept
        if conflicts and not force:
            detail = "; ".join(
                f"target {target_id} in batch {', '.join(map(str, sorted(batch_ids)))}"
                for target_id, batch_ids in sorted(conflicts.items())
            )
            raise HitsGenerationError(
                f"some targets already have step-{step} HITs in an open batch ({detail}); "
                "close that batch or generate again with force"
            )
        if not candidates_by_target:
            raise HitsGenerationError(
                f"nothing to generate: no candidate of benchmark {benchmark.name!r} waits for step {step}"
                + ("" if target_ids is None else " among the chosen targets")
                + " outside open batches"
            )

        plan_target = scheme.planner(
            benchmark=benchmark, settings=settings, step=step, seed=seed, target_ids=sorted(candidates_by_target)
        )
        plans: list[tuple[int, PlannedHIT]] = []
        target_rows = Target.objects.filter(id__in=candidates_by_target.keys()).order_by("id")
        for row in target_rows.values_list("id", "word", "lemma", "pos", "offset", "context__digest", "context__text"):
            target = TargetRef(*row)
            plans.extend((target.id, hit) for hit in plan_target(target, candidates_by_target[target.id]))

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
        hits = HIT.objects.bulk_create(
            [
                HIT(batch=batch, target_id=target_id, part=plan.part, assignments_required=assignments_per_hit)
                for target_id, plan in plans
            ],
            batch_size=_BULK_SIZE,
        )
        _insert_items(
            (hit.pk, position, item)
            for hit, (_, plan) in zip(hits, plans, strict=True)
            for position, item in enumerate(plan.items, start=1)
        )
    logger.info(
        "generated batch %s: step %s, %s HITs for %s targets of %s",
        batch.pk,
        step,
        len(plans),
        len(candidates_by_target),
        benchmark.name,
    )
    return batch
