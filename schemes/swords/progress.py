"""What a SWORDS benchmark already has, per candidate: the one reading the pipeline's advancement,
its progress pages and HIT generation all start from, so they never disagree about what is missing."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from django.db.models import Count, Q, QuerySet

from annotation.models import Benchmark, Candidate, CandidateStage, Target, TargetStage
from annotation.selectors import valid_labels
from schemes.progress import CollectedWork, SchemeProgress, StageMoves, StepCount, TargetCount
from schemes.swords.items import ACCEPT
from schemes.swords.pipeline import CandidateProgress, labels_missing, refresh_moves
from schemes.swords.settings import SwordsSettings

# The candidates a step judges: step 2 reduces fresh candidates, step 3 scores the survivors.
STEP_CANDIDATE_STAGE = {2: CandidateStage.REDUCE, 3: CandidateStage.SCORE}


def valid_label_counts(candidates: QuerySet[Candidate]) -> dict[int, tuple[int, int, int]]:
    """Per candidate of ``candidates`` with any valid label: its valid labels in step 2, its step-2
    accepts and its valid labels in all steps (a candidate without one is absent: all three are 0)."""
    return {
        candidate_id: (step2, step2_accepts, total)
        for candidate_id, step2, step2_accepts, total in valid_labels()
        .filter(candidate__in=candidates.values("pk"))
        .values("candidate_id")
        .annotate(
            step2=Count("pk", filter=Q(step=2)),
            step2_accepts=Count("pk", filter=Q(step=2, value=ACCEPT)),
            total=Count("pk"),
        )
        .values_list("candidate_id", "step2", "step2_accepts", "total")
    }


def candidate_progress(
    *, benchmark: Benchmark, target_ids: list[int] | None = None
) -> dict[int, list[CandidateProgress]]:
    """Per target: each candidate's stage and its valid labels (step 2, step-2 accepts, all steps).

    The one reading of what the benchmark already has: the pipeline's advancement and progress
    pages and HIT generation (``valid_label_counts``) all start from it, so they never disagree
    about what is missing.
    """
    candidates = Candidate.objects.filter(target__benchmark=benchmark)
    if target_ids is not None:
        candidates = candidates.filter(target_id__in=target_ids)
    counts = valid_label_counts(candidates)
    result: dict[int, list[CandidateProgress]] = defaultdict(list)
    for pk, target_id, stage in candidates.values_list("pk", "target_id", "stage").order_by("target_id", "pk"):
        step2, step2_accepts, total = counts.get(pk, (0, 0, 0))
        result[target_id].append(
            CandidateProgress(
                candidate_id=pk, stage=stage, step2_valid=step2, step2_accepts=step2_accepts, valid_total=total
            )
        )
    return result


def swords_progress(*, benchmark: Benchmark, settings: SwordsSettings, work: CollectedWork) -> SchemeProgress:
    """Valid labels collected / needed in step 2 (reduce) and step 3 (score), per step and per target.

    Labels count as HIT generation counts them (``labels_missing`` over ``candidate_progress``):
    collected labels are capped per candidate at what the step needs, so over-collection on one
    candidate never hides a shortfall on another, and ``waiting`` is exactly what a new batch of
    the step would take. Step 3 needs labels only for the survivors of decided targets.
    """
    step2_labels, step3_labels = settings.step2_labels, settings.step3_labels
    lacking = "candidates lacking labels in no open batch"
    steps = {
        2: StepCount(2, "step 2: reduce", "valid labels", "candidates", waiting_noun=lacking),
        3: StepCount(3, "step 3: score", "valid labels", "candidates", waiting_noun=lacking),
    }
    targets = {
        pk: TargetCount(steps={2: (0, 0), 3: None if stage == TargetStage.REDUCE else (0, 0)})
        for pk, stage in Target.objects.filter(benchmark=benchmark).values_list("pk", "stage")
    }
    collected = {pk: {2: [0, 0], 3: [0, 0]} for pk in targets}
    dropped: Counter[int] = Counter()
    surviving: Counter[int] = Counter()
    candidate_stages: Counter[str] = Counter()
    for target_id, rows in candidate_progress(benchmark=benchmark).items():
        for candidate in rows:
            candidate_stages[candidate.stage] += 1
            if candidate.stage == CandidateStage.EXCLUDED:
                # A researcher took it out (docs/annotator.md): it needs no labels.
                continue
            targets[target_id].candidates += 1
            missing = {
                step: labels_missing(candidate, step=step, step2_labels=step2_labels, step3_labels=step3_labels)
                for step in steps
            }
            collected[target_id][2][0] += step2_labels - missing[2]
            collected[target_id][2][1] += step2_labels
            if candidate.stage == CandidateStage.DROPPED:
                dropped[target_id] += 1
            elif candidate.stage in (CandidateStage.SCORE, CandidateStage.FINAL):
                surviving[target_id] += 1
                collected[target_id][3][0] += step3_labels - min(missing[3], step3_labels)
                collected[target_id][3][1] += step3_labels
            for step, stage in STEP_CANDIDATE_STAGE.items():
                held = work.open_candidates.get(step, frozenset())
                if candidate.stage == stage and missing[step] and candidate.candidate_id not in held:
                    steps[step].waiting += 1
    for target_id, target in targets.items():
        for step in steps:
            done, needed = collected[target_id][step]
            if target.steps[step] is not None:
                target.steps[step] = (done, needed)
            steps[step].collected += done
            steps[step].needed += needed
        target.counts = {"dropped": dropped[target_id], "scored": surviving[target_id]}
        steps[2].items += target.candidates
        steps[3].items += surviving[target_id]
    accepts = settings.pass_min_accepts
    summary = (
        f"Step 2 collects {step2_labels} valid labels per candidate; a candidate with at least {accepts} "
        f"accept{'s' if accepts != 1 else ''} goes on to step 3, which collects {step3_labels} more. Workers "
        f"below {settings.min_control_accuracy:.2f} control accuracy are filtered and their HITs re-collected."
    )
    return SchemeProgress(
        steps=[steps[2], steps[3]],
        targets=targets,
        candidates_by_stage={stage: candidate_stages.get(stage, 0) for stage in CandidateStage.values},
        target_columns=("dropped", "scored"),
        summary=summary,
    )


def swords_advancement(
    *, benchmark: Benchmark, settings: SwordsSettings, target_ids: Sequence[int] | None
) -> StageMoves:
    """What a refresh moves among ``target_ids`` (every target when None): ``pipeline.refresh_moves``
    over the stages and labels stored now."""
    targets = Target.objects.filter(benchmark=benchmark)
    if target_ids is not None:
        targets = targets.filter(pk__in=sorted(target_ids))
    stages = dict(targets.values_list("pk", "stage"))
    if not stages:
        return StageMoves()
    return refresh_moves(
        stages,
        candidate_progress(benchmark=benchmark, target_ids=list(stages)),
        step2_labels=settings.step2_labels,
        step3_labels=settings.step3_labels,
        pass_min_accepts=settings.pass_min_accepts,
    )
