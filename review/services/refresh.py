"""Writes of the pipeline: spam filtering with re-collection, worker review, and advancement (docs/design.md §5, §6).

``benchmark_refresh`` is the one operation behind the Celery task queued after every submit,
the ``advance_pipeline`` command and the researcher's "refresh now" button. It recomputes the
spam decisions from the submitted work, applies them (filtering, control flags, automatic
blocks), and only then advances targets, so a step is always advanced from a state in which
filtering is current. The bot signals, which read every answer of the benchmark, are not on its
path: it requests them (``review.services.signals``), and they run in a task of their own.
"""

from __future__ import annotations

import gc
import logging
import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Count, F
from django.utils import timezone

from annotation.changes import benchmark_changed
from annotation.models import Benchmark, Target, TargetStage
from annotation.refresh_requests import Touched, refresh_done, refresh_start
from annotation.tallies import tallies_validity_changed
from crowdlex.dialect import dialect
from crowdlex.progress import Progress
from hits.models import HIT, HOLDS_SLOT, VALID_STATUSES, Assignment, AssignmentStatus
from hits.notifications import benchmark_watch
from hits.slots import slots_recount
from review import selectors
from review.models import ReviewSettings
from review.services.advance import targets_advance
from review.services.flags import auto_block, excluded_workers, sync_control_flags
from review.services.result import RefreshResult
from review.services.signals import benchmark_signals, signals_request
from review.spam import assignments_to_filter, filtering_changes, spam_decisions
from schemes import get_scheme
from schemes.base import scheme_refreshed

logger = logging.getLogger(__name__)


REFRESH_PHASES = 5


def refresh_running(*, benchmark_id: int) -> bool:
    """Whether another transaction holds the benchmark's row lock now: a refresh (or an import) runs.

    A queued refresh that finds one running would only wait for the lock, holding a worker
    process that the bot signals or other tasks could use; its task sends it again instead.
    Never on SQLite, whose single writer runs one at a time anyway (``crowdlex.dialect``).
    """
    return dialect().locked_elsewhere(Benchmark.objects.filter(pk=benchmark_id))


def benchmark_refresh(
    *,
    benchmark: Benchmark,
    now: datetime | None = None,
    full: bool = False,
    touched_only: bool = False,
    progress: Progress | None = None,
) -> RefreshResult:
    """Bring a benchmark up to date: spam decisions, flags, filtering (re-collection), then advancement.

    ``touched_only`` (the refresh queued by submits, ``annotation.refresh_requests``) looks only
    at the workers with new work since the last refresh: all their submitted work, and the targets
    it touches. Spam decisions are per worker and a target advances on its own labels, so that
    reaches the state a whole refresh would, at a cost bounded by the work that arrived instead
    of by the benchmark's size. Everything else (imports, researchers' decisions, crowd syncs,
    the command and the button) refreshes the whole benchmark, which also covers touched work.

    Idempotent: a second call with no new work changes nothing. Concurrency: the whole refresh
    runs in one transaction holding the benchmark's row lock (``SELECT … FOR NO KEY UPDATE``, which
    PostgreSQL honours and SQLite's single writer makes moot), so two refreshes of one benchmark
    run one after the other and the second sees the first's result. Rows are then locked in the
    queue's order (workers, then assignments, then HITs, and the benchmark's change counter at the
    commit, as every transaction moves it, ``benchmark_changed``), so a refresh never deadlocks with a
    claim, a submit, a return or the expiry task. The touched records are removed in that transaction: a
    refresh that dies (a worker killed, acknowledged late and redelivered) leaves them for the
    next run.

    The bot signals are requested in the same transaction (``signals_request``: coalesced and
    throttled, run by their own task once this commits) whenever the refresh looked at work.
    ``full`` (the command, the researcher's button, the end of a simulation) computes them here
    instead, after the refresh has committed, and refreshes the work of any worker they blocked.
    ``progress(phases done, phases)`` after each of its phases (read, control flags, blocks,
    filtering, advancement).

    Python's cycle collector is paused while it runs (``collector_paused``, docs/design.md §6).
    """
    with collector_paused():
        return _refresh(benchmark=benchmark, now=now, full=full, touched_only=touched_only, progress=progress)


class _CollectorPause:
    """Pauses Python's cycle collector while at least one holder runs, in any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders = 0
        self._resume = False

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._lock:
            if self._holders == 0:
                self._resume = gc.isenabled()
                gc.disable()
            self._holders += 1
        try:
            yield
        finally:
            with self._lock:
                self._holders -= 1
                if self._holders == 0 and self._resume:
                    gc.enable()


_COLLECTOR = _CollectorPause()


def collector_paused() -> AbstractContextManager[None]:
    """A refresh reads a row object for every candidate, HIT and label count of the benchmark and
    keeps them until it returns; the cycle collector, started by every few hundred of them, walked
    all of them again and again and freed nothing: near half of a whole refresh's Python time
    (docs/benchmarks.md, "A whole refresh against its floor"). Paused while any refresh runs and
    resumed (if it ran before) when the last one returns, so what cycles a refresh leaves are
    collected after it."""
    return _COLLECTOR.held()


def _refresh(
    *,
    benchmark: Benchmark,
    now: datetime | None,
    full: bool,
    touched_only: bool,
    progress: Progress | None,
) -> RefreshResult:
    now = now or timezone.now()
    result = RefreshResult()
    touched = refresh_start(benchmark_id=benchmark.pk)
    workers = touched.worker_ids if touched_only else None
    if workers is not None and not workers:
        return result  # a refresh before this one already looked at this work

    def phase(done: int) -> None:
        if progress is not None:
            progress(done, REFRESH_PHASES)

    with transaction.atomic():
        # FOR NO KEY UPDATE: it orders refreshes (and imports, which lock the row too) as FOR UPDATE
        # did, without holding up the submits, whose refresh records reference the row (a key share).
        benchmark = Benchmark.objects.select_for_update(no_key=True).get(pk=benchmark.pk)
        settings, _ = ReviewSettings.objects.get_or_create(benchmark=benchmark)
        states = selectors.assignment_states(benchmark=benchmark, worker_ids=workers)
        phase(1)
        scheme = get_scheme(benchmark)
        # A scheme without controls filters nobody by them: no worker is below a threshold of 0.
        threshold = scheme.control_threshold(scheme.settings(benchmark)) or 0.0
        decisions = spam_decisions((s.controls for s in states), min_control_accuracy=threshold)
        sync_control_flags(
            benchmark=benchmark,
            decisions=decisions,
            threshold=threshold,
            now=now,
            result=result,
            worker_ids=workers,
        )
        phase(2)
        result.blocked = auto_block(benchmark=benchmark, settings=settings)
        phase(3)

        excluded = excluded_workers(benchmark=benchmark, worker_ids={s.controls.worker_id for s in states})
        # Work rejected on the crowd never counts either, whoever did it.
        should_filter = assignments_to_filter((s.controls for s in states), excluded_worker_ids=excluded) | {
            s.controls.assignment_id for s in states if s.status == AssignmentStatus.REJECTED
        }
        flipping = set().union(
            *filtering_changes({s.controls.assignment_id: s.filtered for s in states}, should_filter)
        )
        result.filtered, result.unfiltered = _apply_filtering(states=states, should_filter=should_filter)
        phase(4)

        target_ids = None if workers is None else _touched_targets(states=states, flipping=flipping)
        moved: set[int] = set()
        if target_ids is None or target_ids:
            moved = targets_advance(benchmark=benchmark, result=result, target_ids=target_ids)
        refresh_done(benchmark_id=benchmark.pk, touched=touched)
        # Batches done and the budget's 80 % line (docs/design.md §16), told after this commits.
        benchmark_watch(benchmark=benchmark, now=now)
        # With the touched rows gone, the change key must move on (annotation.changes); a refresh of
        # touched work changes the figures of the targets of that work only (docs/design.md §7).
        changed = _changed_targets(touched=touched, states=states, flipping=flipping, moved=moved, looked_at=target_ids)
        benchmark_changed(benchmark_id=benchmark.pk, target_ids=changed)
        scheme_refreshed(scheme, benchmark=benchmark)
        if not full:
            # Last, so the refresh takes the signals' state row after every other lock it needs but
            # the change counter's, taken at the commit (the signals task takes them in the same
            # order: workers, touched work, state, counter).
            signals_request(benchmark_id=benchmark.pk)
        phase(REFRESH_PHASES)
    if result.changed:
        logger.debug("refreshed %s: %s", benchmark.name, result)
    if full:
        signals = benchmark_signals(benchmark=benchmark, now=now, force=True, wait=True)
        result.flags_raised += signals.flags_raised
        result.flags_resolved += signals.flags_resolved
        result.flags_updated += signals.flags_updated
        result.blocked += signals.blocked
        if signals.blocked:
            # Their work stops counting now, not at the next refresh.
            again = benchmark_refresh(benchmark=benchmark, now=now, touched_only=True)
            result.filtered += again.filtered
            result.unfiltered += again.unfiltered
            result.advanced_targets += again.advanced_targets
            result.followup_batches += again.followup_batches
            result.done_targets += again.done_targets
            result.reopened_targets += again.reopened_targets
    return result


def _changed_targets(
    *,
    touched: Touched,
    states: list[selectors.AssignmentState],
    flipping: set[int],
    moved: set[int],
    looked_at: set[int] | None,
) -> set[int] | None:
    """The targets whose figures a refresh of touched work may have changed (None: any, a whole
    refresh): those of the submits its touched records name, those of work whose filtering flipped,
    and those advancement moved or gave follow-up HITs. A record that named no targets brings every
    target the refresh looked at."""
    if looked_at is None:
        return None
    if touched.targets is None:
        return looked_at | moved
    flipped = {s.target_id for s in states if s.controls.assignment_id in flipping and s.target_id is not None}
    return set(touched.targets) | flipped | moved


def _touched_targets(*, states: list[selectors.AssignmentState], flipping: set[int]) -> set[int]:
    """The targets a refresh of touched work advances: those of the touched workers' work, but a
    done target only where this refresh flips the filtering of work on it. New labels never take
    a done target back (it reopens when labels go: filtered, rejected or removed, and rejections
    and removals refresh the whole benchmark), so a worker's long history of finished targets
    costs a refresh nothing."""
    targets = {s.target_id for s in states if s.target_id is not None}
    done = set(Target.objects.filter(pk__in=sorted(targets), stage=TargetStage.DONE).values_list("pk", flat=True))
    flipped = {s.target_id for s in states if s.controls.assignment_id in flipping and s.target_id is not None}
    return (targets - done) | flipped


# ---- filtering and re-collection ----


def _slot_counts(hit_ids: Iterable[int]) -> dict[int, int]:
    """Recount HIT.assignments_active from the assignments themselves (``hits.models.HOLDS_SLOT``)."""
    rows = (
        Assignment.objects.filter(hit_id__in=list(hit_ids))
        .filter(HOLDS_SLOT)
        .values("hit_id")
        .annotate(n=Count("pk"))
        .order_by()
    )
    return {row["hit_id"]: row["n"] for row in rows}


def _apply_filtering(*, states: list[selectors.AssignmentState], should_filter: set[int]) -> tuple[int, int]:
    """Flip ``Assignment.filtered`` to match ``should_filter`` and give HITs their slots back.

    Filtering a submitted assignment frees its slot: the HIT is re-collected from other workers
    (the unique (hit, worker) constraint keeps the filtered worker out). Un-filtering takes a
    slot back only where the HIT still has room, earliest submission first; the rest stay
    filtered as surplus, so a HIT never holds more valid assignments than it requires.

    Locking: the assignments that change, then their HITs, each in id order
    (``SELECT … FOR UPDATE``); each locked HIT's counter is then recounted from its
    assignments, so it is exact whatever happened before. Returns (filtered, unfiltered).
    """
    current = {s.controls.assignment_id: s.filtered for s in states}
    to_filter, to_unfilter = filtering_changes(current, should_filter)
    if to_unfilter:
        # Surplus work waits for room; HITs that are full right now are not worth a lock.
        hit_of = {s.controls.assignment_id: s.controls.hit_id for s in states}
        filling = {hit_of[pk] for pk in to_filter}
        full = set(
            HIT.objects.filter(pk__in={hit_of[pk] for pk in to_unfilter} - filling)
            .filter(assignments_active__gte=F("assignments_required"))
            .values_list("pk", flat=True)
        )
        to_unfilter = {pk for pk in to_unfilter if hit_of[pk] not in full}
    if not to_filter and not to_unfilter:
        return 0, 0
    rows = list(
        Assignment.objects.select_for_update()
        .filter(pk__in=to_filter | to_unfilter)
        .order_by("pk")
        .values_list("pk", "hit_id", "status", "filtered", "submitted_at")
    )
    hit_ids = sorted({hit_id for _, hit_id, _, _, _ in rows})
    hits = {hit.pk: hit for hit in HIT.objects.select_for_update().filter(pk__in=hit_ids).order_by("pk")}
    before = _slot_counts(hit_ids)
    for hit_id, hit in hits.items():
        if hit.assignments_active != before.get(hit_id, 0):
            logger.warning(
                "HIT %s counted %s active assignments but holds %s; recounting",
                hit_id,
                hit.assignments_active,
                before.get(hit_id, 0),
            )

    filter_ids = [pk for pk, _, _, filtered, _ in rows if pk in to_filter and not filtered]
    filtered_count = Assignment.objects.filter(pk__in=filter_ids, filtered=False).update(filtered=True)
    after_filter = _slot_counts(hit_ids)

    unfilter_ids: list[int] = []
    by_hit: dict[int, list[tuple[Any, int, str]]] = defaultdict(list)
    for pk, hit_id, status, filtered, submitted_at in rows:
        if pk in to_unfilter and filtered:
            by_hit[hit_id].append((submitted_at, pk, status))
    for hit_id, waiting in by_hit.items():
        room = hits[hit_id].assignments_required - after_filter.get(hit_id, 0)
        for _, pk, status in sorted(waiting, key=lambda row: (row[0] is None, row[0], row[1])):
            if status in VALID_STATUSES:
                if room <= 0:
                    continue
                room -= 1
            unfilter_ids.append(pk)
    unfiltered_count = Assignment.objects.filter(pk__in=unfilter_ids, filtered=True).update(filtered=False)
    tallies_validity_changed(assignment_ids=filter_ids + unfilter_ids)

    final = _slot_counts(hit_ids)
    for hit_id, hit in hits.items():
        count = final.get(hit_id, 0)
        if hit.assignments_active != count:
            slots_recount(hit_id=hit_id, count=count)
    return filtered_count, unfiltered_count
