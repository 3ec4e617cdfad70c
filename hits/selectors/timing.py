"""How long an assignment takes: the measured median time on the page, for prices and pay per hour."""

from __future__ import annotations

from annotation.models import Benchmark
from crowds.interface.costs import median_seconds
from hits.models import SUBMITTED_STATUSES, Assignment, Batch, confirmed


def benchmark_median_seconds(*, benchmark: Benchmark, step: int) -> float | None:
    """The measured median time per assignment in the benchmark: of the step, else of any step; None untimed."""
    submitted = Assignment.objects.filter(confirmed(), status__in=SUBMITTED_STATUSES, hit__batch__benchmark=benchmark)
    for scope in (submitted.filter(hit__batch__step=step), submitted):
        found = median_seconds(scope.values_list("seconds_on_page", flat=True))
        if found is not None:
            return found
    return None


def batch_median_seconds(*, batch: Batch) -> float | None:
    """The measured median time per assignment: this batch's, else the benchmark's same step, else any step."""
    submitted = Assignment.objects.filter(confirmed(), status__in=SUBMITTED_STATUSES)
    for scope in (
        submitted.filter(hit__batch=batch),
        submitted.filter(hit__batch__benchmark_id=batch.benchmark_id, hit__batch__step=batch.step),
        submitted.filter(hit__batch__benchmark_id=batch.benchmark_id),
    ):
        found = median_seconds(scope.values_list("seconds_on_page", flat=True))
        if found is not None:
            return found
    return None
