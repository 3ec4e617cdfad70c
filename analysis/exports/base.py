"""What the export formats share: the progress counter, the labels a benchmark exports and how
its workers are named."""

from __future__ import annotations

from collections.abc import Callable

from django.db.models import Q, QuerySet

from analysis.models import PseudonymKey
from analysis.pseudonyms import WorkerNames
from analysis.selectors import (
    benchmark_valid_labels,
    reannotation_origin,
)
from annotation.models import Benchmark, Label

Progress = Callable[[int, int], None]
PROGRESS_EVERY = 5000


class RowCounter:
    """Counts written rows and reports progress every PROGRESS_EVERY rows."""

    def __init__(self, total: int, progress: Progress | None) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.progress = progress

    def tick(self, rows: int = 1) -> None:
        before = self.done // PROGRESS_EVERY
        self.done += rows
        if self.progress is not None and self.done // PROGRESS_EVERY != before:
            self.progress(min(self.done, self.total), self.total)

    def finish(self) -> None:
        if self.progress is not None:
            self.progress(self.total, self.total)


def benchmark_label_set(benchmark: Benchmark, split: str | None = None) -> QuerySet[Label]:
    """Valid labels without a re-annotation marked on the benchmark (the labels-csv keeps every label)."""
    labels = benchmark_valid_labels(benchmark=benchmark, split=split)
    origin = reannotation_origin(benchmark)
    if origin is not None:
        labels = labels.exclude(Q(origin=origin) & Q(assignment__isnull=True))
    return labels


def benchmark_worker_names(*, benchmark: Benchmark, raw_workers: bool = False) -> WorkerNames:
    """How an export names the benchmark's workers: pseudonyms under its key (made on first use),
    or raw ids when a researcher asked for them."""
    if raw_workers:
        return WorkerNames(secret=None)
    key, _ = PseudonymKey.objects.get_or_create(benchmark=benchmark)
    return WorkerNames(secret=key.secret)
