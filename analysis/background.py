"""Figures that read every label and are no sum over targets, computed once per change of the
benchmark in the background (docs/design.md §7, "Researcher pages").

Agreement (Krippendorff's alpha and its bootstrap over candidates, each worker against the
leave-one-out majority, Cohen's kappa per pair of workers, RBO against k) and the filter audit
compare labels across the whole benchmark: no target's share of them can be kept apart. They are
computed by a Celery task (``background_figures_refresh``) for the benchmark's change key of the
moment, and a page shows the last ones computed, saying from when, while the task brings them up
to date: after a change the page costs what reading a cache entry costs, and the figures follow
within one computation. Only the first read of a benchmark (or one after its figures were kept
``BENCHMARK_BACKGROUND_FIGURES_KEEP_SECONDS`` untouched) computes them in the request.

A name is registered once with the function that computes it (``register_background_figures``);
the task takes the benchmark's id and that name, and is idempotent: figures already computed for
the current key are not computed again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction

from annotation.changes import change_key, page_cache_get, page_cache_set
from annotation.models import Benchmark
from crowdlex.celery import app

_COMPUTE: dict[str, Callable[[Benchmark], Any]] = {}
REFRESH_TASK = "analysis.tasks.background_figures_refresh"


def register_background_figures(name: str, compute: Callable[[Benchmark], Any]) -> None:
    """Compute the figures ``name`` of a benchmark with ``compute(benchmark)`` in the background."""
    _COMPUTE[name] = compute


@dataclass(frozen=True)
class BackgroundFigures:
    """The last figures computed: their value, the key they were computed at, when (Unix time),
    and whether that key is still the benchmark's (else newer figures are being computed)."""

    value: Any
    key: str
    computed_at: float
    current: bool


def background_cache_key(benchmark_id: int, name: str) -> str:
    """The cache key of the benchmark's figures ``name`` as last computed."""
    return f"benchmark-background:{benchmark_id}:{name}"


def _compute(benchmark: Benchmark, name: str, key: str) -> BackgroundFigures:
    value = _COMPUTE[name](benchmark)
    kept = (key, value, time.time())
    timeout = settings.BENCHMARK_BACKGROUND_FIGURES_KEEP_SECONDS
    page_cache_set(background_cache_key(benchmark.pk, name), kept, timeout=timeout)
    return BackgroundFigures(value=value, key=key, computed_at=kept[2], current=True)


def background_figures(*, benchmark: Benchmark, name: str, key: str | None = None) -> BackgroundFigures:
    """The benchmark's figures ``name`` as last computed. When they are older than its change key
    (``key``, read now when not given; labels and filtering only, so not the age of work in
    progress that ``figures_key`` adds: they read no claim), the task that computes them is queued once per key (a
    second reader finds it queued), at the commit of the reader's transaction; when none were
    kept, they are computed here."""
    key = key if key is not None else change_key(benchmark_id=benchmark.pk)
    kept = page_cache_get(background_cache_key(benchmark.pk, name))
    if kept is None:
        return _compute(benchmark, name, key)
    found_key, value, computed_at = kept
    current = found_key == key
    if not current and cache.add(
        f"{background_cache_key(benchmark.pk, name)}:queued:{key}", 1, timeout=settings.BENCHMARK_FIGURES_WAIT_SECONDS
    ):
        benchmark_id = benchmark.pk
        # Named, not imported: the task imports this module.
        task = app.tasks[REFRESH_TASK]
        transaction.on_commit(lambda: task.delay(benchmark_id, name))
    return BackgroundFigures(value=value, key=found_key, computed_at=computed_at, current=current)


def background_figures_refresh(*, benchmark_id: int, name: str) -> None:
    """Compute the benchmark's figures ``name`` for its change key now, unless they were computed
    for it already or the benchmark is gone (idempotent; what the task runs)."""
    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None or name not in _COMPUTE:
        return
    key = change_key(benchmark_id=benchmark_id)
    kept = cache.get(background_cache_key(benchmark_id, name))
    if kept is not None and kept[0] == key:
        return
    _compute(benchmark, name, key)
