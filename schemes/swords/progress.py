"""What a SWORDS benchmark already has, per candidate: the one reading the pipeline's advancement,
its progress pages and HIT generation all start from, so they never disagree about what is missing."""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Count, Q, QuerySet

from annotation.models import Benchmark, Candidate, CandidateStage
from annotation.selectors import valid_labels
from schemes.swords.items import ACCEPT
from schemes.swords.pipeline import CandidateProgress

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
