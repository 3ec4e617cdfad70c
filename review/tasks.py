"""Celery tasks of the review room: thin wrappers that look rows up and call one service."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.signals import worker_ready

from annotation.models import Benchmark
from annotation.warm import figures_warm_refresh_follows, figures_warm_refreshed
from crowdlex.celery import DATABASE_RETRY

# How soon a refresh of touched work that found another refresh of its benchmark running is tried again.
BUSY_RETRY_SECONDS = 0.3


@shared_task(name="review.tasks.benchmark_refresh", acks_late=True, **DATABASE_RETRY)
def benchmark_refresh(benchmark_id: int, full: bool = False, touched_only: bool = False) -> dict[str, int] | None:
    """Spam recompute, flags, filtering and advancement of one benchmark.

    Submits queue it with ``touched_only`` (the work they touched, at most one queued per
    benchmark: ``annotation.refresh_requests``); other changes queue a whole refresh.
    Idempotent and safe to run twice at once (the service locks the benchmark row), so a
    redelivered or duplicated message does no harm. ``full`` also recomputes the bot signals
    now (the researcher's button); otherwise the refresh queues ``benchmark_signals`` when due.
    Returns a small summary, or None if the benchmark is gone.
    """
    from review.services import benchmark_refresh as refresh
    from review.services import refresh_running

    if touched_only and not full and refresh_running(benchmark_id=benchmark_id):
        # It would only wait for the running one's lock, holding a worker process: sent again shortly.
        benchmark_refresh.apply_async((benchmark_id,), {"touched_only": True}, countdown=BUSY_RETRY_SECONDS)
        return None
    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None:
        return None
    if not touched_only:
        # However it was queued (a change's commit, the researcher's button), the warm of every
        # figure waits for the end of this whole refresh, which moves the key for every target.
        figures_warm_refresh_follows(benchmark_id=benchmark_id)
    try:
        result = refresh(benchmark=benchmark, full=full, touched_only=touched_only)
    except Exception:
        if not touched_only:
            # Rolled back: the change that queued it still wants its figures warmed.
            figures_warm_refreshed(benchmark_id=benchmark_id, whole=True)
        raise
    # The figures the refresh and the submits before it moved, before the next poll reads them: all
    # of them after a whole refresh, once for it and the change that queued it.
    figures_warm_refreshed(benchmark_id=benchmark_id, whole=not touched_only)
    return {
        "filtered": result.filtered,
        "unfiltered": result.unfiltered,
        "flags_raised": result.flags_raised,
        "advanced": len(result.advanced_targets),
        "done": len(result.done_targets),
    }


@shared_task(name="review.tasks.benchmark_signals", acks_late=True, **DATABASE_RETRY)
def benchmark_signals(benchmark_id: int) -> dict[str, int] | None:
    """The bot signals of one benchmark, queued by the refresh when due (``review.services.signals``).

    Idempotent: a run finds nothing pending (a duplicate, a message sent again by the sweep) or
    another run busy and returns at once. Returns a small summary, or None if the benchmark is gone.
    """
    from review.services import benchmark_signals as signals

    benchmark = Benchmark.objects.filter(pk=benchmark_id).first()
    if benchmark is None:
        return None
    result = signals(benchmark=benchmark)
    return {
        "ran": int(result.ran),
        "assignments": result.assignments,
        "flags_raised": result.flags_raised,
        "flags_resolved": result.flags_resolved,
        "blocked": len(result.blocked),
    }


@shared_task(name="review.tasks.refresh_sweep", acks_late=True, **DATABASE_RETRY)
def refresh_sweep(recover: bool = False) -> dict[str, list[int]]:
    """Queue the refreshes and bot-signal runs that a lost message (or a killed run) left waiting
    (``annotation.refresh_requests.refresh_sweep``, ``review.services.signals_sweep``). ``recover``:
    sent by a worker as it starts, for what a worker killed before it took along (docs/design.md §16)."""
    from annotation.refresh_requests import refresh_sweep as sweep
    from review.services import signals_sweep

    return {"refresh": sweep(recover=recover), "signals": signals_sweep(recover=recover)}


@worker_ready.connect
def refresh_sweep_at_start(**_: Any) -> None:
    """A worker that starts (a supervisor restarting a killed one, a deploy) queues the recovering
    sweep at once rather than leave a lost refresh to the sweep on Celery beat: a queued refresh
    whose message a killed worker held is not taken for lost until REFRESH_QUEUED_STALE_SECONDS have passed."""
    refresh_sweep.apply_async(kwargs={"recover": True})
