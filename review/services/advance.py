"""Advancement: targets move through the steps their valid labels allow (DESIGN §6)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from annotation.models import Benchmark, Candidate, CandidateStage, Target, TargetStage
from hits.services.generation import followup_batches_extend
from review import selectors
from review.services.result import RefreshResult
from schemes.swords import SCORE_STEP
from schemes.swords.pipeline import advance_target, labels_missing, target_done
from schemes.swords.settings import settings_of


def _advance(*, benchmark: Benchmark, result: RefreshResult, target_ids: set[int] | None = None) -> None:
    """Move targets through the stages their valid labels allow (DESIGN §6).

    reduce → score when every candidate has its step-2 labels: survivors get step-3 HITs in the
    step-3 batch of their step-2 batch (``hits.services.generation.followup_batches_extend``), the
    rest are dropped. score →
    done when every candidate has the labels its stage needs; done → score again, at the same
    refresh, as soon as one lacks some: work filtered or rejected in this refresh or since the
    last one (a crowd's rejection, an assignment the crowd does not know), or imported labels
    removed. Pass decisions, once made, are not revisited.

    Every target is looked at, done ones too, unless ``target_ids`` names the only ones whose
    labels may have changed (a refresh of touched work): a target moves on its own labels alone.
    """
    settings = settings_of(benchmark)
    step2, step3 = settings.step2_labels, settings.step3_labels
    targets = Target.objects.filter(benchmark=benchmark)
    if target_ids is not None:
        targets = targets.filter(pk__in=sorted(target_ids))
    stages = dict(targets.values_list("pk", "stage"))
    if not stages:
        return
    progress = selectors.candidate_progress(benchmark=benchmark, target_ids=list(stages))

    passed: list[int] = []
    dropped: list[int] = []
    needs_step3: list[int] = []
    for target_id, stage in sorted(stages.items()):
        if stage != TargetStage.REDUCE:
            continue
        candidates = progress.get(target_id, [])
        advancement = advance_target(
            [c for c in candidates if c.stage == CandidateStage.REDUCE],
            step2_labels=step2,
            pass_min_accepts=settings.pass_min_accepts,
        )
        if advancement is None:
            continue
        passed.extend(advancement.passed)
        dropped.extend(advancement.dropped)
        result.advanced_targets.append(target_id)
        stages[target_id] = TargetStage.SCORE
        new_stage = {pk: CandidateStage.SCORE for pk in advancement.passed} | {
            pk: CandidateStage.DROPPED for pk in advancement.dropped
        }
        progress[target_id] = [replace(c, stage=new_stage.get(c.candidate_id, c.stage)) for c in candidates]
        if any(
            labels_missing(c, step=3, step2_labels=step2, step3_labels=step3)
            for c in progress[target_id]
            if c.stage == CandidateStage.SCORE
        ):
            needs_step3.append(target_id)
    if result.advanced_targets:
        Candidate.objects.filter(pk__in=passed, stage=CandidateStage.REDUCE).update(stage=CandidateStage.SCORE)
        Candidate.objects.filter(pk__in=dropped, stage=CandidateStage.REDUCE).update(stage=CandidateStage.DROPPED)
        Target.objects.filter(pk__in=result.advanced_targets, stage=TargetStage.REDUCE).update(stage=TargetStage.SCORE)
    if needs_step3:
        result.step3_batches = [
            batch.pk for batch in followup_batches_extend(benchmark=benchmark, step=SCORE_STEP, targets=needs_step3)
        ]

    finished: list[int] = []
    reopened: list[int] = []
    for target_id, stage in sorted(stages.items()):
        if stage not in (TargetStage.SCORE, TargetStage.DONE):
            continue
        candidates = progress.get(target_id, [])
        complete = target_done(candidates, step2_labels=step2, step3_labels=step3)
        if stage == TargetStage.SCORE and complete:
            finished.append(target_id)
        elif stage == TargetStage.DONE and not complete:
            reopened.append(target_id)
    if finished:
        Candidate.objects.filter(target_id__in=finished, stage=CandidateStage.SCORE).update(stage=CandidateStage.FINAL)
        Target.objects.filter(pk__in=finished, stage=TargetStage.SCORE).update(stage=TargetStage.DONE)
    if reopened:
        Candidate.objects.filter(target_id__in=reopened, stage=CandidateStage.FINAL).update(stage=CandidateStage.SCORE)
        Target.objects.filter(pk__in=reopened, stage=TargetStage.DONE).update(stage=TargetStage.SCORE)
    result.done_targets = finished
    result.reopened_targets = reopened


# How targets move through a scheme's steps, by ``AnnotationScheme.pipeline``; a scheme whose
# targets need no moving (one step, or assigned experts) names none.
ADVANCEMENT: dict[str, Callable[..., None]] = {"reduce-score": _advance}
