"""Planning a batch (docs/design.md §3) without writing it: what a step still needs, the HITs the scheme
lays out for it, and the checks on the batch's arguments. ``hits_generate`` writes such a plan,
``hits.preview.batch_preview`` prices it: one planning code, so the preview is what creation makes."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

from annotation.models import Benchmark, Target, Worker
from crowdlex.progress import Progress
from crowds.interface import ARRIVAL_QUEUE, backend_names, default_backend_name, get_backend
from hits.assignees import AssigneesError, assignees_plan
from hits.qualification.selectors import failed_annotators
from hits.selectors import open_batch_holdings
from schemes import get_scheme
from schemes.base import (
    AnnotationScheme,
    CandidateRef,
    PlannedHIT,
    SchemeSettings,
    StepWork,
    TargetRef,
    main_step,
)

# Batch fields a caller may set besides the named arguments; follow-up batches copy them from their parent.
BATCH_OPTIONS = frozenset(
    {
        # Workers see their own accuracy on the check items (hits.selectors.own_work).
        "gold_feedback",
        "assignment_duration",
        "lifetime",
        "auto_approval_delay",
        "title",
        "description",
        "keywords",
        "qualifications",
        # What a paid crowd is told about filtered work (crowds.services.publishing).
        "filtered_policy",
        "rejection_message",
        # The task design of the page (docs/design.md §4.1): a follow-up shows what its parent showed.
        "design",
    }
)
# SWORDS needs 10 labels per candidate in all; a hundred per HIT is far beyond any real use.
MAX_ASSIGNMENTS_PER_HIT = 100


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


@dataclass
class Collectable:
    """What a new batch of one step would collect, by target, and why the rest is left out."""

    work: StepWork
    by_target: dict[int, list[CandidateRef]] = field(default_factory=dict)
    # Candidates, and targets that are themselves the item, left to the open batch of the step holding them.
    candidates_in_open_batches: int = 0
    targets_in_open_batches: int = 0
    # Target id -> open batches holding some of its work (explicit targets, without force).
    conflicts: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))


def collectable(
    *,
    scheme: AnnotationScheme,
    settings: SchemeSettings,
    benchmark: Benchmark,
    step: int,
    target_ids: list[int] | None,
    assignments_per_hit: int,
    held: Literal["skip", "conflict", "take"],
    candidate_ids: Collection[int] | None = None,
) -> Collectable:
    """What a batch of ``step`` collects: what the scheme says the step still needs, each candidate
    asking for the labels it lacks (at most ``assignments_per_hit``). Work an open batch of the step
    holds is left to it (``held="skip"``), reported as a conflict, or taken all the same.
    ``candidate_ids``: only these candidates (a target left without one of them is left out)."""
    work = scheme.work_for_step(benchmark=benchmark, settings=settings, step=step, target_ids=target_ids)
    if candidate_ids is not None:
        only = set(candidate_ids)
        chosen = {
            target_id: [candidate for candidate in candidates if candidate.id in only]
            for target_id, candidates in work.by_target.items()
        }
        work = dataclasses.replace(work, by_target={target_id: kept for target_id, kept in chosen.items() if kept})
    held_candidates, held_targets = open_batch_holdings(benchmark=benchmark, step=step, target_ids=target_ids)
    result = Collectable(work=work)
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
            assignments = min(assignments_per_hit, candidate.assignments or assignments_per_hit)
            kept.append(
                candidate if candidate.assignments == assignments else candidate._replace(assignments=assignments)
            )
        if holders and held == "conflict":
            result.conflicts[target_id].update(holders)
        if kept or not candidates:
            result.by_target[target_id] = kept
    return result


def _nothing_to_collect(*, benchmark: Benchmark, step: int, found: Collectable, chosen: bool) -> str:
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


def plan_hits(
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


@dataclass(frozen=True)
class BatchPlan:
    """The HITs a new batch would have, planned but not written: what ``hits_generate`` writes and
    what ``batch_preview`` prices (one planning code for both)."""

    step: int
    seed: int
    backend: str
    assignments_per_hit: int
    reward: Decimal
    plans: list[tuple[int, PlannedHIT]]
    assignees: dict[int, tuple[int, ...]] | None

    @property
    def hit_assignments(self) -> list[int]:
        """How many assignments each planned HIT collects."""
        return [plan.assignments or self.assignments_per_hit for _, plan in self.plans]

    @property
    def targets(self) -> int:
        return len({target_id for target_id, _ in self.plans})


def batch_plan(
    *,
    benchmark: Benchmark,
    step: int,
    seed: int,
    targets: Iterable[Target | int] | None = None,
    backend: str | None = None,
    assignments_per_hit: int | None = None,
    reward: Decimal | None = None,
    force: bool = False,
    annotators: Sequence[Worker] | None = None,
    overlap: int = 0,
    progress: Progress | None = None,
    candidates: Collection[int] | None = None,
    **batch_options: Any,
) -> BatchPlan:
    """Plan the batch ``hits_generate`` would create with these arguments (see there), writing nothing.

    Raises ``HitsGenerationError`` for everything ``hits_generate`` refuses. Read-only: the caller
    that writes the plan holds the benchmark's row lock around this call and the write.
    """
    own = get_scheme(benchmark)
    steps = [known.number for known in own.steps]
    if step not in steps:
        raise HitsGenerationError(f"step must be one of {', '.join(map(str, steps))} in {own.title}, got {step!r}")
    # The scheme that runs the step: the benchmark's, or the one it hands the step to (generation).
    scheme = get_scheme(benchmark, step=step)
    unknown = sorted(set(batch_options) - BATCH_OPTIONS)
    if unknown:
        raise HitsGenerationError(f"unknown batch options: {', '.join(unknown)}")
    backend = backend or default_backend_name()
    if backend not in backend_names():
        raise HitsGenerationError(f"backend must be one of {', '.join(backend_names())}, got {backend!r}")
    if scheme.assigned and annotators is None:
        raise HitsGenerationError(
            f"{scheme.title} assigns its work to named annotators: name them, and how many targets two of them share"
        )
    if annotators is not None and get_backend(backend).arrival != ARRIVAL_QUEUE:
        raise HitsGenerationError("work assigned to named annotators is collected on the local queue")
    if annotators is None and overlap:
        raise HitsGenerationError("an overlap is shared by named annotators: name them")
    if annotators is not None:
        failed = failed_annotators(benchmark=benchmark, workers=annotators)
        if failed:
            raise HitsGenerationError(
                f"{', '.join(failed)} did not pass the qualification test of {benchmark.name}, so work assigned "
                "to them would never be collected: name others, or let them retake it"
            )
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

    target_ids = None if targets is None else _target_ids(benchmark=benchmark, targets=targets)
    found = collectable(
        scheme=scheme,
        settings=settings,
        benchmark=benchmark,
        step=step,
        target_ids=target_ids,
        assignments_per_hit=assignments_per_hit,
        held="skip" if target_ids is None else "take" if force else "conflict",
        candidate_ids=candidates,
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
    plans = plan_hits(
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
            (target_id, dataclasses.replace(plan, assignments=len(assignees[target_id]))) for target_id, plan in plans
        ]
        assignments_per_hit = 2 if overlap else 1
    return BatchPlan(
        step=step,
        seed=seed,
        backend=backend,
        assignments_per_hit=assignments_per_hit,
        reward=reward,
        plans=plans,
        assignees=assignees,
    )
