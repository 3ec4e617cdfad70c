"""Reads of researchers' decisions (docs/design.md §17), for the figures and exports of ``analysis``."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import QuerySet

from annotation.models import Benchmark
from crowdlex.statements import shaped_rows
from review.models import CandidateOverride, ReviewSettings


def overrides_applied(*, benchmark: Benchmark) -> bool:
    """Whether the benchmark's figures follow researchers' decisions (off without review settings)."""
    # Built by the ORM once per process (``crowdlex.statements.shaped_rows``).
    return any(applied for (applied,) in shaped_rows(_applies_overrides, benchmark.pk))


def _applies_overrides(benchmark_id: int) -> QuerySet[ReviewSettings, tuple[bool]]:
    return ReviewSettings.objects.filter(benchmark_id=benchmark_id).order_by("pk").values_list("apply_overrides")[:1]


def candidate_overrides(
    *, benchmark: Benchmark, candidate_ids: Iterable[int] | None = None
) -> dict[int, tuple[str, str]]:
    """Candidate id -> (decision, reason) of the benchmark's decided candidates (of ``candidate_ids`` if given)."""
    rows = CandidateOverride.objects.filter(benchmark=benchmark)
    if candidate_ids is not None:
        rows = rows.filter(candidate_id__in=list(candidate_ids))
    return {
        candidate: (decision, reason)
        for candidate, decision, reason in rows.values_list("candidate_id", "decision", "reason")
    }


def applied_decisions(*, benchmark: Benchmark) -> dict[int, str]:
    """Candidate id -> decided category where the figures follow decisions; empty where they do not."""
    if not overrides_applied(benchmark=benchmark):
        return {}
    return dict(CandidateOverride.objects.filter(benchmark=benchmark).values_list("candidate_id", "decision"))
