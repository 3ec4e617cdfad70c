"""The bot signals in a task of their own: requested by the refresh, coalesced, throttled, durable.

The signals (``review.signals``, ``review.interaction``) read every answer of a benchmark. Inside
the refresh they made one refresh of touched work as slow as the benchmark is large; now the
refresh only requests them (``signals_request``) and ``benchmark_signals`` runs in its own
Celery task, at most one queued per benchmark:

- **Coalesced.** A request while a run is pending only counts itself (``SignalsState.requests``);
  the run reads that count before it reads the work and, once it has committed, marks the
  requests up to it done. A request that came during the run is left pending, and the run queues
  the next one. So a burst of refreshes queues one run, and no request is missed.
- **Throttled.** A run may start ``signals_gap`` after the last one ended: nine times the last
  run's duration (at least ``MIN_GAP``, at most ``MAX_GAP``), so the signals take at most a tenth
  of a worker's time per benchmark however fast work arrives, and they are current that long
  after the last change. They flag for review; a delay of seconds is harmless.
- **Durable.** The state is a row in the database; a run that dies rolls back and leaves its
  requests pending; a message lost (a broker down at commit) or a run killed is sent again by the
  sweep (``signals_sweep``, with the refresh's sweep on Celery beat) once it is overdue.

What consumes the signals reads their flags (``WorkerFlag``, the flagged-workers page and the API,
the statistics' flag counts), and the researcher's automatic blocking on them: a run blocks as the
refresh did, and records the blocked workers as touched work (``refresh_touch``), so the refresh
filters their labels. A run's flags are written from one consistent computation over all the work
it read, so after the last request has run they equal those of a computation from scratch.

In-process Celery (``CELERY_TASK_ALWAYS_EAGER``, the embedded default) has no timers: a run not due
yet is held back (``queued_at`` None) and sent by the first request after it is due.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta
from functools import partial

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from annotation.changes import benchmark_changed
from annotation.models import Benchmark
from annotation.refresh_requests import refresh_touch
from crowdlex.celery import app
from crowdlex.dialect import dialect
from review import selectors
from review.models import SignalsState
from review.services.flags import auto_block, sync_signal_flags
from review.services.result import SignalsResult
from review.signals import worker_signals

logger = logging.getLogger(__name__)

SIGNALS_TASK = "review.tasks.benchmark_signals"
# First key of the advisory lock one run holds (the second is the benchmark's id): two runs of one
# benchmark never overlap (see annotation.refresh_requests.LOCK_SPACE for the refresh's).
LOCK_SPACE = 170_002
# The signals take at most 1 / (1 + RUN_GAP_FACTOR) of a worker's time per benchmark.
RUN_GAP_FACTOR = 9.0
MIN_GAP = timedelta(seconds=2)
MAX_GAP = timedelta(minutes=10)
# A pending run whose start is this much overdue lost its message or died: the sweep sends it again.
OVERDUE = timedelta(minutes=2)


def signals_gap(*, last_seconds: float) -> timedelta:
    """How long after a run of ``last_seconds`` the next may start (the throttle, module docstring)."""
    return min(MAX_GAP, max(MIN_GAP, timedelta(seconds=RUN_GAP_FACTOR * last_seconds)))


def _eager() -> bool:
    return bool(app.conf.task_always_eager)


def _send(state: SignalsState, *, now: datetime) -> None:
    """Queue the run (on commit), due at ``state.due_at``; in-process Celery holds a run not yet due."""
    assert state.due_at is not None
    delay = max(0.0, (state.due_at - now).total_seconds())
    if delay > 0 and _eager():
        state.queued_at = None
        return
    state.queued_at = now
    task = app.tasks[SIGNALS_TASK]
    transaction.on_commit(partial(task.apply_async, (state.benchmark_id,), countdown=delay or None))


def _locked_state(benchmark_id: int) -> SignalsState:
    SignalsState.objects.get_or_create(benchmark_id=benchmark_id)
    return SignalsState.objects.select_for_update().get(benchmark_id=benchmark_id)


def signals_request(*, benchmark_id: int, at_once: bool = False, now: datetime | None = None) -> bool:
    """Ask for the bot signals of a benchmark to be recomputed; returns whether a run was queued.

    Call inside the transaction whose changes the signals must see (the refresh's): the request
    commits with them and the task is queued on commit. One run at most is queued: a request
    while one is pending is counted only, unless that run's message is overdue (then it is sent
    again) or was held back and is due now. ``at_once`` skips the throttle (new thresholds, a
    researcher's "refresh now"). Locks the benchmark's ``SignalsState`` row to the end of the
    transaction.
    """
    now = now or timezone.now()
    with transaction.atomic():
        state = _locked_state(benchmark_id)
        was_pending = state.pending
        state.requests += 1
        send = False
        if not was_pending:
            due = now
            if not at_once and state.computed_at is not None:
                due = max(now, state.computed_at + signals_gap(last_seconds=state.seconds))
            state.due_at, send = due, True
        elif at_once and (state.due_at is None or state.due_at > now):
            state.due_at, send = now, True
        elif _unsent_or_overdue(state, now=now):
            send = True
        if send:
            _send(state, now=now)
        state.save()
    return send and state.queued_at is not None


def _unsent_or_overdue(state: SignalsState, *, now: datetime) -> bool:
    """A pending run due by now whose message was held back, or lost: due long ago and not run."""
    if not state.pending or state.due_at is None or state.due_at > now:
        return False
    return state.queued_at is None or state.due_at < now - OVERDUE


def signals_sweep(*, now: datetime | None = None, recover: bool = False) -> list[int]:
    """Send again the runs whose message was lost or whose run died (overdue), and those held back
    that are due; returns their benchmarks' ids. Run with the refresh's sweep on Celery beat.
    ``recover`` (a Celery worker starting, ``annotation.refresh_requests.refresh_sweep``): every
    pending run is sent again, overdue or not, as the worker that stopped may have held its message."""
    now = now or timezone.now()
    waiting = SignalsState.objects.filter(requests__gt=F("computed_requests"), due_at__isnull=False)
    if not recover:
        waiting = waiting.filter(due_at__lte=now).filter(Q(queued_at__isnull=True) | Q(due_at__lt=now - OVERDUE))
    sent = []
    for benchmark_id in waiting.order_by("benchmark_id").values_list("benchmark_id", flat=True):
        with transaction.atomic():
            state = SignalsState.objects.select_for_update().get(benchmark_id=benchmark_id)
            if (recover and state.pending and state.due_at is not None) or _unsent_or_overdue(state, now=now):
                _send(state, now=now)
                state.save(update_fields=["queued_at"])
                if state.queued_at is not None:
                    sent.append(benchmark_id)
    return sent


def _try_lock(benchmark_id: int, *, wait: bool) -> bool:
    # Always taken on SQLite, which has one writer at a time (crowdlex.dialect).
    if wait:
        dialect().advisory_lock(LOCK_SPACE, benchmark_id)
        return True
    return dialect().advisory_lock_try(LOCK_SPACE, benchmark_id)


def benchmark_signals(
    *, benchmark: Benchmark, now: datetime | None = None, force: bool = False, wait: bool = False
) -> SignalsResult:
    """Recompute the bot signals of a benchmark from all its submitted work and apply them: flags
    raised, updated and resolved, then the automatic blocks the researcher chose.

    Runs only if a request is pending, or with ``force`` (the command, the "refresh now" button,
    the end of a simulation, which want current signals now). Concurrency: one transaction that
    holds the benchmark's signals lock (an advisory lock), so two runs never overlap; a run that
    finds it held returns at once (``wait`` waits instead), since the running one queues the next
    if requests came meanwhile. It holds no lock the refresh or the submits wait for while it
    reads. Idempotent: a second run with no new work changes nothing.
    """
    now = now or timezone.now()
    result = SignalsResult()
    began = time.monotonic()
    with transaction.atomic():
        if not _try_lock(benchmark.pk, wait=wait):
            return result
        SignalsState.objects.get_or_create(benchmark_id=benchmark.pk)
        # Read before the work: requests committed after this are left pending (see the module's docstring).
        seen = SignalsState.objects.values_list("requests", "computed_requests").get(benchmark_id=benchmark.pk)
        if not force and seen[0] <= seen[1]:
            return result
        settings = selectors.review_settings(benchmark=benchmark)
        work = selectors.submitted_work(benchmark=benchmark)
        signals = worker_signals(work, selectors.signal_settings(benchmark=benchmark))
        sync_signal_flags(benchmark=benchmark, signals=signals, now=now, result=result)
        if settings.auto_block_signals:
            result.blocked = auto_block(benchmark=benchmark, settings=settings)
            if result.blocked:
                # Their labels stop counting once the refresh has filtered them.
                refresh_touch(benchmark_id=benchmark.pk, worker_ids=result.blocked)
        result.ran = True
        result.assignments = len(work)
        result.seconds = time.monotonic() - began
        state = SignalsState.objects.select_for_update().get(benchmark_id=benchmark.pk)
        state.computed_requests = max(state.computed_requests, seen[0])
        state.computed_at = timezone.now()
        state.seconds = result.seconds
        state.assignments = result.assignments
        # Flags, blocks and the signals' state show on the researcher's pages (annotation.changes).
        # No target's figures move: a blocked worker's labels stop counting only once the refresh of
        # their touched work filters them, and that refresh names its targets (docs/design.md §7).
        benchmark_changed(benchmark_id=benchmark.pk, target_ids=())
        if state.pending:
            # Requests came in while this ran: the next run, throttled.
            state.due_at = state.computed_at + signals_gap(last_seconds=state.seconds)
            _send(state, now=state.computed_at)
        state.save()
    if result.changed:
        logger.info("bot signals of %s: %s", benchmark.name, result)
    return result


def signals_current(*, benchmark: Benchmark) -> bool:
    """Whether the last run saw every request (nothing pending), for pages and the benchmark."""
    state = SignalsState.objects.filter(benchmark=benchmark).first()
    return state is None or not state.pending


__all__ = [
    "SignalsResult",
    "benchmark_signals",
    "signals_current",
    "signals_gap",
    "signals_request",
    "signals_sweep",
]
