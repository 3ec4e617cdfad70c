"""Batch and HIT generation (DESIGN §3): one service, called by pages, API, admin and commands."""

from __future__ import annotations

import io
import logging
from collections import defaultdict
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

import numpy as np
from django.contrib.auth.models import User
from django.db import connection, transaction

from annotation.models import Benchmark, Candidate, CandidateStage, Target
from hits import distractors
from hits.models import HIT, Backend, Batch, BatchStatus, HITItem
from hits.planning import CandidateRef, PlannedHIT, PlannedItem, plan_target_hits, target_key, target_rng

logger = logging.getLogger(__name__)

# The candidates a step judges: step 2 reduces fresh candidates, step 3 scores the survivors.
STEP_CANDIDATE_STAGE = {2: CandidateStage.REDUCE, 3: CandidateStage.SCORE}
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


def _covered_candidates(*, benchmark: Benchmark, step: int, target_ids: list[int] | None) -> dict[int, int]:
    """Candidate id -> id of a non-closed batch of this step that already holds it."""
    items = HITItem.objects.filter(
        candidate__isnull=False, hit__batch__benchmark=benchmark, hit__batch__step=step
    ).exclude(hit__batch__status=BatchStatus.CLOSED)
    if target_ids is not None:
        items = items.filter(hit__target_id__in=target_ids)
    return {candidate_id: batch_id for candidate_id, batch_id in items.values_list("candidate_id", "hit__batch_id")}


def _excluded_by_target(
    *, benchmark: Benchmark, target_ids: Iterable[int], pool: distractors.DistractorPool
) -> dict[int, frozenset[str]]:
    """Distractor exclusions per target: its word and lemma, and every candidate ever proposed for
    that lemma anywhere in the benchmark (whatever its stage): the synonyms the platform knows."""
    wanted = set(target_ids)
    lemma_of_target: dict[int, str] = {}
    texts_by_lemma: dict[str, set[str]] = defaultdict(set)
    for target_id, word, lemma in Target.objects.filter(benchmark=benchmark).values_list("id", "word", "lemma"):
        lemma_key = (lemma or word).casefold()
        lemma_of_target[target_id] = lemma_key
        texts_by_lemma[lemma_key].update((word, lemma))
    for target_id, normalized in Candidate.objects.filter(target__benchmark=benchmark).values_list(
        "target_id", "normalized"
    ):
        texts_by_lemma[lemma_of_target[target_id]].add(normalized)
    by_lemma: dict[str, frozenset[str]] = {}
    result: dict[int, frozenset[str]] = {}
    for target_id in wanted:
        lemma_key = lemma_of_target[target_id]
        if lemma_key not in by_lemma:
            by_lemma[lemma_key] = distractors.excluded_for(texts_by_lemma[lemma_key], pool=pool)
        result[target_id] = by_lemma[lemma_key]
    return result


def _distractor_picker(
    *, excluded: frozenset[str], pool: distractors.DistractorPool
) -> Callable[[np.random.Generator], str]:
    def pick(rng: np.random.Generator) -> str:
        return distractors.pick_distractor(rng=rng, excluded=excluded, pool=pool)

    return pick


def _csv_field(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _insert_items(rows: Iterable[tuple[int, int, PlannedItem]]) -> None:
    """Insert HIT items: COPY on PostgreSQL (several times faster than INSERT for ~50,000 rows),
    bulk_create elsewhere. Item positions count from 1."""
    if connection.vendor != "postgresql":
        HITItem.objects.bulk_create(
            (
                HITItem(
                    hit_id=hit_id, position=position, kind=item.kind, candidate_id=item.candidate_id, text=item.text
                )
                for hit_id, position, item in rows
            ),
            batch_size=_BULK_SIZE,
        )
        return
    buffer = io.StringIO()
    for hit_id, position, item in rows:
        # CSV: an unquoted empty field is NULL (controls have no candidate), quoted text stays text.
        candidate = "" if item.candidate_id is None else str(item.candidate_id)
        buffer.write(f"{hit_id},{position},{item.kind},{candidate},{_csv_field(item.text)}\n")
    buffer.seek(0)
    table = HITItem._meta.db_table
    with connection.cursor() as cursor:
        cursor.copy_expert(
            f"COPY {table} (hit_id, position, kind, candidate_id, text) FROM STDIN WITH (FORMAT csv)", buffer
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
    """Create a batch of `step` (2 or 3) with its HITs and their items, and return it (status open).

    Candidates: those of the step's stage (step 2: `reduce`, step 3: `score`) of `targets`, or of
    every target of the benchmark when `targets` is None. Per target, `hits.planning` shuffles them
    with a generator seeded by `seed` and the target's content, splits them into
    ceil(n / candidates_per_hit) HITs and adds the two controls; the same seed gives the same HITs.

    A candidate is collected in at most one non-closed batch per step, so that a target's labels
    are not asked for twice by mistake:
    - with `targets` None, candidates already in a non-closed batch of the step are skipped (so the
      call picks up what is new, e.g. targets imported or advanced since the last batch);
    - with explicit `targets`, any such candidate is an error naming the targets and batches,
      unless `force` is true (then all their candidates are generated again).
    A batch with no HIT is never created: that is an error too.

    `assignments_per_hit` defaults to the benchmark's step2_labels or step3_labels, `reward` to
    the benchmark's. `batch_options` sets other Batch fields (assignment_duration, lifetime, ...).

    Concurrency: runs in one transaction holding a row lock on the benchmark, so two generations
    for one benchmark run one after the other and the second sees the first's HITs.
    Writes are bulk inserts: HITs first (ids come back from PostgreSQL), then their items.
    """
    if step not in STEP_CANDIDATE_STAGE:
        raise HitsGenerationError(f"step must be 2 or 3, got {step!r}")
    if backend not in Backend.values:
        raise HitsGenerationError(f"backend must be one of {', '.join(Backend.values)}, got {backend!r}")
    unknown = sorted(set(batch_options) - BATCH_OPTIONS)
    if unknown:
        raise HitsGenerationError(f"unknown batch options: {', '.join(unknown)}")
    if assignments_per_hit is None:
        assignments_per_hit = benchmark.step2_labels if step == 2 else benchmark.step3_labels
    if assignments_per_hit < 1:
        raise HitsGenerationError(
            f"assignments per HIT must be at least 1, got {assignments_per_hit}"
            + (f" (benchmark {benchmark.name!r} collects no step-3 labels)" if step == 3 else "")
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
        per_hit = benchmark.candidates_per_hit
        target_ids = None if targets is None else _target_ids(benchmark=benchmark, targets=targets)

        candidate_rows = Candidate.objects.filter(target__benchmark=benchmark, stage=STEP_CANDIDATE_STAGE[step])
        if target_ids is not None:
            candidate_rows = candidate_rows.filter(target_id__in=target_ids)
        covered = _covered_candidates(benchmark=benchmark, step=step, target_ids=target_ids)
        candidates_by_target: dict[int, list[CandidateRef]] = defaultdict(list)
        conflicts: dict[int, set[int]] = defaultdict(set)
        for candidate_id, target_id, text, normalized in candidate_rows.values_list(
            "id", "target_id", "text", "normalized"
        ):
            if candidate_id in covered:
                if target_ids is None:
                    continue
                conflicts[target_id].add(covered[candidate_id])
            candidates_by_target[target_id].append(CandidateRef(id=candidate_id, text=text, key=normalized))
        if conflicts and not force:
            detail = "; ".join(
                f"target {target_id} in batch {', '.join(map(str, sorted(batch_ids)))}"
                for target_id, batch_ids in sorted(conflicts.items())
            )
            raise HitsGenerationError(
                f"some candidates already have step-{step} HITs in an open batch ({detail}); "
                "close that batch or generate again with force"
            )
        if not candidates_by_target:
            raise HitsGenerationError(
                f"nothing to generate: no candidate of benchmark {benchmark.name!r} waits for step {step}"
                + ("" if target_ids is None else " among the chosen targets")
                + " outside open batches"
            )

        pool = distractors.distractor_pool()
        excluded = _excluded_by_target(benchmark=benchmark, target_ids=candidates_by_target, pool=pool)
        plans: list[tuple[int, PlannedHIT]] = []
        target_rows = Target.objects.filter(id__in=candidates_by_target.keys()).order_by("id")
        for target_id, word, offset, pos, digest in target_rows.values_list(
            "id", "word", "offset", "pos", "context__digest"
        ):
            rng = target_rng(
                seed=seed, step=step, key=target_key(context_digest=digest, offset=offset, word=word, pos=pos)
            )
            planned = plan_target_hits(
                target_word=word,
                candidates=candidates_by_target[target_id],
                per_hit=per_hit,
                rng=rng,
                pick_distractor=_distractor_picker(excluded=excluded[target_id], pool=pool),
            )
            plans.extend((target_id, hit) for hit in planned)

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
