"""Advancement: targets move through the steps their valid labels allow (docs/design.md §6), as their
scheme decides (``AnnotationScheme.advancement``); this module writes the decision."""

from __future__ import annotations

from annotation.models import Benchmark, Candidate, Target
from hits.services.generation import followup_batches_extend
from review import selectors
from review.services.result import RefreshResult
from schemes import get_scheme
from schemes.progress import CANDIDATE, TARGET


def targets_advance(*, benchmark: Benchmark, result: RefreshResult, target_ids: set[int] | None = None) -> set[int]:
    """Move the benchmark's targets as its scheme decides, and extend the follow-up batches.

    The scheme decides (``AnnotationScheme.advancement``): targets that go on to a later step, with
    their candidates kept or dropped, and those of them whose survivors need a follow-up batch of
    ``followup_step`` (added to the follow-up batch of their batch,
    ``hits.services.generation.followup_batches_extend``); targets done when every candidate has
    its labels, and done ones that lack some again (work filtered or rejected in this refresh or
    since the last one, imported labels removed). A one-step scheme's targets are done when their
    work is collected, or nothing moves.

    Every target is looked at, done ones too, unless ``target_ids`` names the only ones whose labels
    may have changed (a refresh of touched work): a target moves on its own labels alone. Each move
    is a conditional update (from the stage the decision read), in the caller's transaction.
    Returns the targets it changed: moved, with candidates moved, or given follow-up HITs.
    """
    scheme = get_scheme(benchmark)
    scoped = None if target_ids is None else sorted(target_ids)
    decided = scheme.advancement(
        benchmark=benchmark,
        settings=scheme.settings(benchmark),
        work=selectors.collected_work(benchmark=benchmark, target_ids=scoped, with_holdings=False),
        target_ids=scoped,
    )
    changed: set[int] = set()
    for move in decided.moves:
        if not move.ids:
            continue
        if move.what == CANDIDATE:
            Candidate.objects.filter(pk__in=move.ids, stage=move.old).update(stage=move.new)
            changed.update(Candidate.objects.filter(pk__in=move.ids).values_list("target_id", flat=True))
        elif move.what == TARGET:
            Target.objects.filter(pk__in=move.ids, stage=move.old).update(stage=move.new)
            changed.update(move.ids)
        else:
            raise ValueError(f"{scheme.title} moved {move.what!r}: neither targets nor candidates")
    result.advanced_targets.extend(decided.advanced)
    result.done_targets.extend(decided.done)
    result.reopened_targets.extend(decided.reopened)
    if decided.followup:
        if scheme.followup_step is None:
            raise ValueError(f"{scheme.title} asked for a follow-up batch but names no follow-up step")
        result.followup_batches = [
            batch.pk
            for batch in followup_batches_extend(
                benchmark=benchmark, step=scheme.followup_step, targets=decided.followup
            )
        ]
        changed.update(decided.followup)
    return changed
