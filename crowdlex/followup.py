"""Queueing the review refresh once work changes (docs/design.md §5: filtering is recomputed whenever new work arrives).

The review room sits above the apps that collect and import work (docs/architecture.md), so they name the
task by its registered Celery name instead of importing it. ``review.apps`` registers the task in
every process; were it missing, the lookup raises ``KeyError`` rather than dropping the refresh.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from django.db import transaction

from annotation.warm import figures_warm_refresh_follows
from crowdlex.celery import app

REFRESH_TASK = "review.tasks.benchmark_refresh"


def benchmark_refresh_queue(benchmark_ids: Iterable[int]) -> None:
    """Queue one refresh per benchmark once the current transaction commits (at once outside one)."""
    task = app.tasks[REFRESH_TASK]
    for benchmark_id in sorted(set(benchmark_ids)):
        # First: the warm of the figures after the change is left to the refresh's (annotation.warm).
        # Robust: a cache out of reach costs that warm's saving, never the refresh.
        transaction.on_commit(partial(figures_warm_refresh_follows, benchmark_id=benchmark_id), robust=True)
        transaction.on_commit(partial(task.delay, benchmark_id))
