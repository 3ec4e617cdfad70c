"""A benchmark's figures brought up to date right after a change, before its first reader
(docs/design.md §7, "Figures warmed after a change").

A change that names every target (an import, a setting, a split: ``benchmark_changed`` with no
targets) leaves every page's figures to be computed again from the whole benchmark, and the first
reader after it would pay that scan in its request. Instead the change queues a task at its commit
that computes them as a reader would, under the benchmark's change key of the moment
(``annotation.changes.benchmark_cached``), so the first reader finds them in the cache. A refresh
(which follows the submits) queues the same task for the figures cheap to bring up to date.

The rooms above this one know what their pages read: each registers a warmer
(``register_figures_warmer``) that reads its figures through the same functions its pages call.
Each kind of warm (after a change naming every target, after a refresh) is queued once until its
task starts: a change that commits while one is queued is left to it (the task reads the change key
when it starts), and one that commits once it has started queues it again, once. Under a stream of
submits a refresh follows another: a warm after a refresh that starts while the next refresh is
queued leaves its work to the warm that refresh queues when it commits, whose key is newer, unless
no warm has run for ``BENCHMARK_FIGURES_WARM_DEFER_SECONDS`` (``figures_warm_start``). A reader
meanwhile computes what it needs as before: the figures are stored under the key read before them,
never older than it, so the task never shows a reader figures older than its change.

A warm reads: its warmers run in one read-only transaction, each in a savepoint of its own (one that
fails leaves the others theirs), one transaction for the database to count instead of one for each
of the hundred-odd statements the pages' functions run. A warmer that may write (the evaluation
stores the lemmas it finds missing) says so and runs in a transaction of its own, so no lock it
takes is held for the rest of the warm.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import groupby

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction

from annotation.models import Benchmark, RefreshQueued
from crowdlex.celery import app
from crowdlex.dialect import dialect

logger = logging.getLogger(__name__)
# Named, not imported: the task imports this module (annotation.tasks).
WARM_TASK = "annotation.tasks.benchmark_figures_warm"


@dataclass(frozen=True)
class Warmer:
    """Figures a room's pages read: ``warm(benchmark)`` reads them as a page does. ``after_refresh``:
    worth bringing up to date after each refresh too (what a submit moves, kept per target), not only
    after a change that names every target. ``writes``: it may write rows (else it runs in the warm's
    read-only transaction)."""

    name: str
    warm: Callable[[Benchmark], object]
    after_refresh: bool
    writes: bool = False


_WARMERS: dict[str, Warmer] = {}


def register_figures_warmer(
    name: str, warm: Callable[[Benchmark], object], *, after_refresh: bool = True, writes: bool = False
) -> None:
    """Bring the figures ``name`` of a benchmark up to date with ``warm(benchmark)`` after each
    change that names every target (and after each refresh, with ``after_refresh``). Registered in
    the order they run; registering a name again replaces it. ``warm`` reads only, in a read-only
    transaction, unless ``writes``."""
    _WARMERS[name] = Warmer(name=name, warm=warm, after_refresh=after_refresh, writes=writes)


def figures_warmers(*, every_target: bool = True) -> list[Warmer]:
    """The warmers a warm runs: all of them after a change naming every target, else those marked
    ``after_refresh``."""
    return [warmer for warmer in _WARMERS.values() if every_target or warmer.after_refresh]


def _queued_key(benchmark_id: int, every_target: bool) -> str:
    return f"benchmark-warm:{benchmark_id}:{'every' if every_target else 'refresh'}:queued"


def figures_warm_queue(*, benchmark_id: int, every_target: bool) -> None:
    """Queue the warm of the benchmark's figures at the commit of the current transaction (at once
    outside one), unless ``BENCHMARK_FIGURES_WARM`` is off or one of the same kind is queued and not
    started yet."""
    if not settings.BENCHMARK_FIGURES_WARM:
        return
    # Robust: a broker or cache out of reach loses the warm (readers compute the figures as without
    # it), never the committed change's answer.
    transaction.on_commit(lambda: _send(benchmark_id, every_target), robust=True)


def _send(benchmark_id: int, every_target: bool) -> None:
    if every_target and cache.get(_follows_key(benchmark_id)):
        # A whole refresh queued at this commit or before moves the key again, for every target:
        # its warm, queued once it commits, is the one worth running (figures_warm_refreshed).
        return
    if not every_target and cache.get(_queued_key(benchmark_id, True)):
        # A warm of every figure, queued and not started, reads the key after this commit.
        return
    # Lost with its message (a broker gone), the mark goes after BENCHMARK_FIGURES_WAIT_SECONDS and
    # the next change queues again; meanwhile readers compute the figures as without the task.
    if cache.add(_queued_key(benchmark_id, every_target), 1, timeout=settings.BENCHMARK_FIGURES_WAIT_SECONDS):
        app.tasks[WARM_TASK].delay(benchmark_id, every_target)


def _follows_key(benchmark_id: int) -> str:
    return f"benchmark-warm:{benchmark_id}:refresh-follows"


def figures_warm_refresh_follows(*, benchmark_id: int) -> None:
    """A whole refresh of the benchmark is being queued (``crowdlex.followup``, at the commit of the
    change that asked for it: an import of labels, a removal, a block...). It commits a change that
    names every target, so the warm of the change before it would compute figures read by no one:
    until the refresh's task ends (``figures_warm_refreshed``) or BENCHMARK_FIGURES_WAIT_SECONDS
    pass (a refresh lost), a warm of every figure is left to it, and one already queued returns
    when it starts (``figures_warm_start``)."""
    if settings.BENCHMARK_FIGURES_WARM:
        cache.set(_follows_key(benchmark_id), 1, timeout=settings.BENCHMARK_FIGURES_WAIT_SECONDS)


def figures_warm_refreshed(*, benchmark_id: int, whole: bool) -> None:
    """A refresh of the benchmark committed (``review.tasks.benchmark_refresh``): queue the warm of
    every figure after a whole refresh (which named every target: the warm its change left to this
    call, once for the change that queued the refresh and the refresh), else of those cheap to bring
    up to date after one."""
    if whole:
        cache.delete(_follows_key(benchmark_id))
    figures_warm_queue(benchmark_id=benchmark_id, every_target=whole)


def _ran_key(benchmark_id: int) -> str:
    return f"benchmark-warm:{benchmark_id}:ran"


def figures_warm_start(*, benchmark_id: int, every_target: bool) -> bool:
    """Whether a warm whose task starts now should run (the task asks first, in its look-ups'
    transaction): not a warm of every figure while a whole refresh is queued or running, which
    queues its own once it commits; not a warm after a refresh when the next refresh is queued
    already (a submit committed since this warm's refresh began: it moved the key, and the warm
    that refresh queues at its commit reads the newer one), unless no warm has run for
    ``BENCHMARK_FIGURES_WARM_DEFER_SECONDS`` (a stream of submits warms them that often)."""
    # From here on a change that commits queues another warm: this one may have read the key before it.
    cache.delete(_queued_key(benchmark_id, every_target))
    if every_target:
        return not cache.get(_follows_key(benchmark_id))
    if settings.BENCHMARK_FIGURES_WARM_DEFER_SECONDS <= 0 or cache.get(_ran_key(benchmark_id)) is None:
        return True
    return not RefreshQueued.objects.filter(benchmark_id=benchmark_id).exists()


@contextmanager
def _one_transaction(*, read_only: bool) -> Iterator[None]:
    """One transaction for everything inside (the caller's, when it has one); read-only, when it
    begins here on PostgreSQL, with ``read_only``."""
    begins = not connection.in_atomic_block
    with transaction.atomic(savepoint=False):
        if read_only and begins:
            dialect().transaction_read_only()
        yield


def figures_warm_run(*, benchmark_id: int, every_target: bool) -> WarmResult | None:
    """What the task runs: ``benchmark_figures_warm`` when ``figures_warm_start`` says so and the
    benchmark is still there (None otherwise); the look-ups in one read-only transaction."""
    with _one_transaction(read_only=True):
        if not figures_warm_start(benchmark_id=benchmark_id, every_target=every_target):
            logger.info("warm of benchmark %s left to a later one", benchmark_id)
            return None
        benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None:
        return None
    result = benchmark_figures_warm(benchmark=benchmark, every_target=every_target)
    logger.info(
        "warm of benchmark %s (%s): %s",
        benchmark_id,
        "every figure" if every_target else "after a refresh",
        ", ".join(f"{name} {seconds:.2f} s" for name, seconds in result.seconds.items()),
    )
    return result


@dataclass(frozen=True)
class WarmResult:
    """What a warm did: seconds per warmer that ran, and the warmers that failed."""

    seconds: dict[str, float]
    failed: list[str]


def benchmark_figures_warm(*, benchmark: Benchmark, every_target: bool = True) -> WarmResult:
    """Compute the benchmark's figures as its pages read them, for its change key now (what the task
    runs). Idempotent: figures already computed for the key are read from the cache. A warmer that
    fails is logged and the others run: its page computes its figures itself, as without the task.
    Consecutive warmers that only read run in one transaction (read-only when it begins here), one
    that writes in its own; each in a savepoint."""
    # From here on a change that commits queues another warm: this one may have read the key before it.
    cache.delete(_queued_key(benchmark.pk, every_target))
    if settings.BENCHMARK_FIGURES_WARM_DEFER_SECONDS > 0:
        cache.set(_ran_key(benchmark.pk), 1, timeout=settings.BENCHMARK_FIGURES_WARM_DEFER_SECONDS)
    seconds: dict[str, float] = {}
    failed: list[str] = []
    period = figures_period()
    for again in (False, True):
        for writes, warmers in groupby(figures_warmers(every_target=every_target), key=lambda each: each.writes):
            with _one_transaction(read_only=not writes):
                for warmer in warmers:
                    started = time.perf_counter()
                    try:
                        with transaction.atomic():
                            warmer.warm(benchmark)
                    except Exception:
                        logger.exception("warming the figures %s of benchmark %s failed", warmer.name, benchmark.pk)
                        failed.append(warmer.name)
                    seconds[warmer.name] = seconds.get(warmer.name, 0.0) + time.perf_counter() - started
        if again or failed or figures_period() == period:
            break
        # The figures' period (part of their key) ended while they were computed: the first ones
        # are kept under the last period's key. Once more, from what is kept per target.
    return WarmResult(seconds=seconds, failed=failed)


def figures_period() -> int:
    """The period of ``BENCHMARK_FIGURES_MAX_AGE_SECONDS`` now, as the figures' key holds it
    (``annotation.changes.figures_key``)."""
    return int(time.time()) // max(1, settings.BENCHMARK_FIGURES_MAX_AGE_SECONDS)
