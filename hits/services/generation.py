"""Batch and HIT generation (DESIGN §3): one service for pages, API, admin and commands, and one
that the pipeline calls as targets reach step 3."""

from __future__ import annotations

import io
import logging
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

import numpy as np
from django.contrib.auth.models import User
from django.db import connection, transaction

from analysis.pipeline import labels_missing
from annotation.models import Benchmark, Candidate, Target
from hits import distractors
from hits.models import HIT, Backend, Batch, BatchStatus, HITItem
from hits.planning import CandidateRef, PlannedHIT, PlannedItem, plan_target_hits, target_key, target_rng
from hits.selectors import STEP_CANDIDATE_STAGE, candidate_progress, open_batch_candidates

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
        # What a paid crowd is told about filtered work (hits.services.crowd).
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


@dataclass
class _Collectable:
    """The candidates a new batch of one step would collect, by target, and why others are left out."""

    by_target: dict[int, list[CandidateRef]] = field(default_factory=lambda: defaultdict(list))
    # Candidates of the step whose valid labels already satisfy it (imported or collected).
    satisfied: int = 0
    # Candidates left to the open batch of the step that holds them.
    in_open_batches: int = 0
    # Target id -> open batches holding some of its candidates (explicit targets, without force).
    conflicts: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))


def _collectable(
    *,
    benchmark: Benchmark,
    step: int,
    target_ids: list[int] | None,
    assignments_per_hit: int,
    held: Literal["skip", "conflict", "take"],
) -> _Collectable:
    """What a batch of ``step`` collects: candidates of the step's stage that lack valid labels, each
    asking for the labels it lacks (at most ``assignments_per_hit``); labels the benchmark has are
    never asked for again (DESIGN §2). Candidates an open batch of the step holds are left to it
    (``held="skip"``), reported as conflicts, or taken all the same."""
    lacking: dict[int, int] = {}
    result = _Collectable()
    stage = STEP_CANDIDATE_STAGE[step]
    for rows in candidate_progress(benchmark=benchmark, target_ids=target_ids).values():
        for candidate in rows:
            if candidate.stage != stage:
                continue
            missing = labels_missing(
                candidate, step=step, step2_labels=benchmark.step2_labels, step3_labels=benchmark.step3_labels
            )
            if missing:
                lacking[candidate.candidate_id] = missing
            else:
                result.satisfied += 1
    covered = open_batch_candidates(benchmark=benchmark, step=step, target_ids=target_ids)
    candidate_rows = Candidate.objects.filter(target__benchmark=benchmark, stage=stage)
    if target_ids is not None:
        candidate_rows = candidate_rows.filter(target_id__in=target_ids)
    for candidate_id, target_id, text, normalized in candidate_rows.values_list(
        "id", "target_id", "text", "normalized"
    ):
        if candidate_id not in lacking:
            continue
        if candidate_id in covered:
            if held == "skip":
                result.in_open_batches += 1
                continue
            if held == "conflict":
                result.conflicts[target_id].add(covered[candidate_id])
        result.by_target[target_id].append(
            CandidateRef(
                id=candidate_id, text=text, key=normalized, assignments=min(assignments_per_hit, lacking[candidate_id])
            )
        )
    return result


_STEP3_ENTRY = " (survivors of step 2 enter it when the pipeline advances their target)"


def _nothing_to_collect(*, benchmark: Benchmark, step: int, found: _Collectable, chosen: bool) -> str:
    labels = f"their {benchmark.step2_labels} valid step-2 labels" if step == 2 else "all their valid labels"
    reasons = []
    if found.satisfied:
        reasons.append(f"{found.satisfied:,} candidates already have {labels} (imported or collected)")
    if found.in_open_batches:
        reasons.append(f"{found.in_open_batches:,} candidates are being collected by open batches of the step")
    return (
        f"nothing needs collecting in step {step} of benchmark {benchmark.name!r}"
        + (" for the chosen targets" if chosen else "")
        + ": "
        + ("; ".join(reasons) or f"no candidate is at step {step}" + (_STEP3_ENTRY if step == 3 else ""))
    )


def _plan(
    *, benchmark: Benchmark, step: int, seed: int, by_target: dict[int, list[CandidateRef]]
) -> list[tuple[int, PlannedHIT]]:
    """The HITs of each target (hits.planning), seeded by the batch seed and the target's content."""
    pool = distractors.distractor_pool()
    excluded = _excluded_by_target(benchmark=benchmark, target_ids=by_target, pool=pool)
    plans: list[tuple[int, PlannedHIT]] = []
    target_rows = Target.objects.filter(id__in=by_target.keys()).order_by("id")
    for target_id, word, offset, pos, digest in target_rows.values_list(
        "id", "word", "offset", "pos", "context__digest"
    ):
        rng = target_rng(seed=seed, step=step, key=target_key(context_digest=digest, offset=offset, word=word, pos=pos))
        planned = plan_target_hits(
            target_word=word,
            candidates=by_target[target_id],
            per_hit=benchmark.candidates_per_hit,
            rng=rng,
            pick_distractor=_distractor_picker(excluded=excluded[target_id], pool=pool),
        )
        plans.extend((target_id, hit) for hit in planned)
    return plans


def _write(*, batch: Batch, plans: list[tuple[int, PlannedHIT]]) -> None:
    """Bulk inserts: HITs first (ids come back from PostgreSQL), then their items."""
    hits = HIT.objects.bulk_create(
        [
            HIT(batch=batch, target_id=target_id, part=plan.part, assignments_required=plan.assignments)
            for target_id, plan in plans
        ],
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
    **batch_options: Any,
) -> Batch:
    """Create a batch of `step` (2 or 3) with its HITs and their items, and return it (status open).

    Candidates: those of the step's stage (step 2: `reduce`, step 3: `score`) of `targets`, or of
    every target of the benchmark when `targets` is None, that still lack valid labels for the
    step: labels the benchmark already has, imported or collected, are never collected again
    (`analysis.pipeline.labels_missing`, the count the pipeline page shows). Each HIT asks for the
    labels its candidates lack (at most `assignments_per_hit`); candidates lacking different
    numbers go to different HITs. Per target, `hits.planning` shuffles them with a generator
    seeded by `seed` and the target's content, splits them into HITs of at most
    candidates_per_hit and adds the controls; the same seed gives the same HITs.

    A candidate is collected in at most one non-closed batch per step, so that a target's labels
    are not asked for twice by mistake:
    - with `targets` None, candidates already in a non-closed batch of the step are skipped (so the
      call picks up what is new, e.g. targets imported or advanced since the last batch);
    - with explicit `targets`, any such candidate is an error naming the targets and batches,
      unless `force` is true (then all their candidates lacking labels are generated again).
    A batch with no HIT is never created: that is an error saying why nothing needs collecting.

    `assignments_per_hit` defaults to the benchmark's step2_labels or step3_labels, `reward` to
    the benchmark's. `batch_options` sets other Batch fields (assignment_duration, lifetime, ...).

    Concurrency: runs in one transaction holding a row lock on the benchmark, so two generations
    for one benchmark run one after the other and the second sees the first's HITs.
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
        target_ids = None if targets is None else _target_ids(benchmark=benchmark, targets=targets)
        found = _collectable(
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
                f"some candidates already have step-{step} HITs in an open batch ({detail}); "
                "close that batch or generate again with force"
            )
        if not found.by_target:
            raise HitsGenerationError(
                _nothing_to_collect(benchmark=benchmark, step=step, found=found, chosen=target_ids is not None)
            )
        plans = _plan(benchmark=benchmark, step=step, seed=seed, by_target=found.by_target)
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
        _write(batch=batch, plans=plans)
    return batch


def _step3_batch(*, benchmark: Benchmark, parent: Batch | None) -> Batch:
    """The open step-3 batch of ``parent``, made now if there is none.

    A new one takes its parent's settings as they are now. Imported step-2 labels have no parent:
    theirs is any open parentless local step-3 batch, else a new one with the benchmark's settings.
    """
    open_batches = Batch.objects.filter(benchmark=benchmark, step=3, parent=parent).exclude(status=BatchStatus.CLOSED)
    if parent is None:
        open_batches = open_batches.filter(backend=Backend.LOCAL)
    existing = open_batches.order_by("pk").first()
    if existing is not None:
        return existing
    if parent is None:
        return Batch.objects.create(
            benchmark=benchmark,
            step=3,
            seed=benchmark.seed,
            assignments_per_hit=benchmark.step3_labels,
            reward=benchmark.reward,
        )
    # The endpoint goes with the parent, so the step-3 HITs reach the workers who did step 2.
    endpoint = {key: parent.external[key] for key in ("environment",) if key in parent.external}
    return Batch.objects.create(
        benchmark=benchmark,
        step=3,
        parent=parent,
        backend=parent.backend,
        seed=parent.seed,
        assignments_per_hit=benchmark.step3_labels,
        reward=parent.reward,
        created_by=parent.created_by,
        external=endpoint,
        **{name: getattr(parent, name) for name in BATCH_OPTIONS},
    )


def _queue_publish(batch_id: int) -> None:
    # Imported here: the hits tasks import these services.
    from hits.tasks import batch_publish_task

    transaction.on_commit(lambda: batch_publish_task.delay(batch_id))


def step3_batches_extend(*, benchmark: Benchmark, targets: Iterable[int]) -> list[Batch]:
    """Give targets that just reached step 3 their HITs, in the step-3 batch of their step-2 batch.

    Step 3 has one batch per step-2 batch (DESIGN §3), so it follows its parent's backend: the
    first target to advance from a step-2 batch makes it, with the parent's settings at that moment
    (endpoint, seed, reward, review policy, durations, texts, qualifications) and `step3_labels`
    assignments per HIT; later targets add their HITs to it while it is open (once it is closed, a
    new one is made). A target's parent is the latest step-2 batch holding its HITs; targets whose
    step-2 labels were all imported share one parentless local step-3 batch.

    On a crowd that pays, the new HITs are published after commit when the parent has been
    published, to the parent's endpoint: the researcher who published step 2 has started the
    collection. An unpublished parent's step-3 batch waits to be published, as its parent does.

    Candidates get HITs as in ``hits_generate``: only those lacking valid labels, each asking for
    what it lacks, none already in an open step-3 batch. Runs in the caller's transaction (the
    pipeline's refresh holds the benchmark's row lock) and returns the batches that got HITs.
    """
    target_ids = sorted(set(targets))
    extended: list[Batch] = []
    with transaction.atomic():
        benchmark = Benchmark.objects.select_for_update().get(pk=benchmark.pk)
        parent_of: dict[int, int | None] = dict.fromkeys(target_ids)
        for target_id, batch_id in (
            HIT.objects.filter(target_id__in=target_ids, batch__step=2)
            .values_list("target_id", "batch_id")
            .order_by("batch_id")
        ):
            parent_of[target_id] = batch_id
        parents = Batch.objects.in_bulk({parent_id for parent_id in parent_of.values() if parent_id is not None})
        found = _collectable(
            benchmark=benchmark, step=3, target_ids=target_ids, assignments_per_hit=benchmark.step3_labels, held="skip"
        )
        groups: dict[int | None, dict[int, list[CandidateRef]]] = defaultdict(dict)
        for target_id, candidates in found.by_target.items():
            groups[parent_of[target_id]][target_id] = candidates
        for parent_id, by_target in sorted(groups.items(), key=lambda item: item[0] or 0):
            parent = parents[parent_id] if parent_id is not None else None
            batch = _step3_batch(benchmark=benchmark, parent=parent)
            _write(batch=batch, plans=_plan(benchmark=benchmark, step=3, seed=batch.seed, by_target=by_target))
            if parent is not None and "published_at" in parent.external:
                _queue_publish(batch.pk)
            extended.append(batch)
    return extended
