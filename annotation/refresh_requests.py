"""Coalesced refresh requests: a burst of submits queues one refresh of the work they touched.

Every submit used to queue a refresh of the whole benchmark; at tens of submits a second one
worker fell behind for good. Now a submit records which worker has new work
(``RefreshTouched``) and queues a refresh only if none is queued yet (``RefreshQueued``, one row
per benchmark). The refresh (``review.services.refresh``) deletes the queued row before it reads
and removes the touched rows it looked at once it has committed. The state lives in the database,
so it holds for any number of web processes, hosts and Celery workers.

Why no submit is missed: a submit that finds a refresh queued relies on that refresh seeing its
work, so that refresh must not start reading before the submit commits. A submit holds a shared
advisory lock on the benchmark from the moment it looks at the queued row until it commits; the
refresh deletes the queued row under the exclusive lock, so it waits for those submits (they hold
it for the end of their transaction only, milliseconds) and reads after them, while submits never
wait on each other. A submit that comes after the delete finds no row, adds one and queues the
next refresh. SQLite has a single writer, which gives the same order without the lock.

The review room sits above the apps that write here (docs/architecture.md), so the task is named
by its registered Celery name; were it missing, the lookup raises ``KeyError`` rather than
dropping the refresh.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from annotation.models import RefreshQueued, RefreshTouched
from crowdlex.celery import app
from crowdlex.dialect import Dialect, dialect
from crowdlex.followup import REFRESH_TASK
from crowdlex.sql import execute, kept_cursor

# First key of the advisory locks taken here (PostgreSQL's two-key form; the second is the
# benchmark's id), so they cannot meet another use of advisory locks.
LOCK_SPACE = 170_001


def queued_stale() -> timedelta:
    """A queued row older than this lost its message (a broker down at commit, a purged queue): the
    next submit queues the refresh again. Far longer than a refresh waits in a queue that keeps up
    (``REFRESH_QUEUED_STALE_SECONDS``, docs/design.md §6)."""
    return timedelta(seconds=settings.REFRESH_QUEUED_STALE_SECONDS)


_QUEUED = RefreshQueued._meta.db_table
_TOUCHED = RefreshTouched._meta.db_table


def _statements(sql: Dialect, workers: int) -> tuple[str, str, str, str]:
    """``refresh_touch``'s statements for ``workers`` workers: the touch, the queueing and the
    requeueing of a stale one, as run one by one; and, where the database chains writes, the one
    statement that runs the three."""
    # A worker's row is locked by its own submits only, which do not overlap. The queued row is
    # inserted with DO NOTHING, not DO UPDATE: the latter would lock it and make every submit of
    # the benchmark wait for the one before it to commit.
    # A prepared statement (crowdlex.sql) must know each parameter's type.
    typed = sql.typed
    worker_rows = " UNION ALL ".join([f"SELECT {typed('bigint')} AS id"] * workers)
    # A touch that names no targets leaves the row naming none (any target of the worker's work).
    joined = sql.json_lists_joined(f"{_TOUCHED}.target_ids", "excluded.target_ids")
    touch = (
        f"INSERT INTO {_TOUCHED} (benchmark_id, worker_id, touches, target_ids) "
        f"SELECT {typed('bigint')}, w.id, 1, {typed('jsonb')} FROM ({worker_rows}) AS w{{gate}} "
        f"WHERE true ON CONFLICT (benchmark_id, worker_id) DO UPDATE SET touches = {_TOUCHED}.touches + 1, "
        f"target_ids = CASE WHEN {_TOUCHED}.target_ids IS NULL OR excluded.target_ids IS NULL THEN NULL "
        f"ELSE {joined} END"
    )
    queue = (
        f"INSERT INTO {_QUEUED} (benchmark_id, queued_at) SELECT {typed('bigint')}, {typed('timestamptz')}{{gate}} "
        "WHERE true ON CONFLICT DO NOTHING"
    )
    requeue = f"UPDATE {_QUEUED} SET queued_at = {typed('timestamptz')} WHERE benchmark_id = %s AND queued_at < %s"
    chained = ""
    if sql.chains_writes:
        # One statement. The lock is the source of both inserts, so it is held before either row is
        # written.
        parts = [f"gate AS ({sql.advisory_lock_shared_gate()})"]
        if workers:
            parts.append(f"touch AS ({touch.format(gate=', gate')})")
        parts.append(f"ins AS ({queue.format(gate=' FROM gate')} RETURNING benchmark_id)")
        parts.append(f"old AS ({requeue} AND NOT EXISTS (SELECT 1 FROM ins) RETURNING benchmark_id)")
        chained = f"WITH {', '.join(parts)} SELECT benchmark_id FROM ins UNION ALL SELECT benchmark_id FROM old"
    return touch.format(gate=""), queue.format(gate=""), requeue, chained


_statements_kept = functools.cache(_statements)


def refresh_touch(
    *,
    benchmark_id: int,
    worker_ids: Iterable[int],
    target_ids: Iterable[int] | None = None,
    stale_after: timedelta | None = None,
) -> bool:
    """Record new work of ``worker_ids`` and queue a refresh of it unless one is queued already.
    ``target_ids``: the targets of that work, recorded with it for the figures kept per target
    (``annotation.changes``); None when the work may be on any target of the workers.
    ``stale_after``: a queued refresh older than this is taken for lost and queued again
    (``queued_stale()`` when None).

    Call inside the transaction that writes the work: the records commit (or roll back) with it,
    and the refresh is queued on commit. One statement on PostgreSQL, whatever the rate of
    submits. Returns whether this call queued the refresh.
    """
    workers = sorted(set(worker_ids))
    targets = None if target_ids is None else json.dumps(sorted(set(target_ids)))
    now = timezone.now()
    stale = now - (queued_stale() if stale_after is None else stale_after)
    sql = dialect()
    # The submit's shape (one worker) and the sweep's (none) are built once per process.
    touch, queue, requeue, chained = (_statements_kept if len(workers) <= 1 else _statements)(sql, len(workers))
    with kept_cursor() as cursor:
        if sql.chains_writes:
            params: list[int | datetime | str | None] = [LOCK_SPACE, benchmark_id]
            if workers:
                params += [benchmark_id, targets, *workers]
            params += [benchmark_id, now, now, benchmark_id, stale]
            execute(cursor, chained, params)
            queued = cursor.fetchone() is not None
        else:
            # One writer at a time: the order the lock gives holds without it.
            if workers:
                cursor.execute(touch, [benchmark_id, targets, *workers])
            cursor.execute(queue, [benchmark_id, now])
            queued = cursor.rowcount == 1
            if not queued:
                cursor.execute(requeue, [now, benchmark_id, stale])
                queued = cursor.rowcount == 1
    if queued:
        transaction.on_commit(partial(app.tasks[REFRESH_TASK].delay, benchmark_id, touched_only=True))
    return queued


def refresh_sweep(*, recover: bool = False) -> list[int]:
    """Queue the refresh of every benchmark whose touched work has no live queued refresh; returns
    their ids. Run by Celery beat: a refresh message lost after its submit committed (a broker
    down at that moment) would otherwise wait for the benchmark's next submit.

    ``recover``: run when a Celery worker starts (``review.tasks``). The worker that stopped before
    it may have been killed holding a refresh's message, unacknowledged (Redis hands it out again
    only after CELERY_VISIBILITY_TIMEOUT), while its queued row, still young, keeps every submit
    from queueing another. So every refresh still owed is queued again, however recently it was
    queued, and so is a queued row with no touched work left (a refresh that never ran): a
    duplicate costs a refresh that finds nothing to look at.
    """
    touched = set(RefreshTouched.objects.values_list("benchmark_id", flat=True).distinct())
    if recover:
        touched |= set(RefreshQueued.objects.values_list("benchmark_id", flat=True))
    stale_after = timedelta(0) if recover else None
    queued = []
    for benchmark_id in sorted(touched):
        with transaction.atomic():
            if refresh_touch(benchmark_id=benchmark_id, worker_ids=(), stale_after=stale_after):
                queued.append(benchmark_id)
    return queued


@dataclass(frozen=True)
class Touched:
    """What a refresh of touched work looks at: each worker's row as read, ``{worker: (row id, touches)}``.

    The row's id is part of what was read: once a refresh deletes a row, the worker's next submit
    inserts a new one, whose ``touches`` starts again at 1 and may equal what another refresh read
    of the old row; only the id tells them apart.
    """

    rows: dict[int, tuple[int, int]]
    # The targets the rows' submits named, or None where a touch named none (``refresh_touch``).
    targets: frozenset[int] | None = frozenset()

    @property
    def worker_ids(self) -> set[int]:
        return set(self.rows)


def refresh_start(*, benchmark_id: int) -> Touched:
    """The refresh begins: it is no longer queued, and these are the workers to look at.

    Commits on its own, before the refresh reads: a submit after this queues the next refresh.
    Waits for the submits that saw the queued row to commit (the exclusive advisory lock).
    """
    with transaction.atomic(), connection.cursor() as cursor:
        dialect().advisory_lock(LOCK_SPACE, benchmark_id)
        cursor.execute(f"DELETE FROM {_QUEUED} WHERE benchmark_id = %s", [benchmark_id])
        cursor.execute(
            f"SELECT worker_id, id, touches, target_ids FROM {_TOUCHED} WHERE benchmark_id = %s",
            [benchmark_id],
        )
        found = cursor.fetchall()
    targets: set[int] | None = set()
    for _, _, _, stored in found:
        if stored is None or targets is None:
            targets = None
            continue
        targets.update(int(target_id) for target_id in (json.loads(stored) if isinstance(stored, str) else stored))
    return Touched(
        rows={worker_id: (pk, touches) for worker_id, pk, touches, _ in found},
        targets=None if targets is None else frozenset(targets),
    )


def refresh_done(*, benchmark_id: int, touched: Touched) -> None:
    """Forget the touched rows a refresh looked at, unless a submit touched them again meanwhile
    (the row's ``touches`` moved on, or the row is a new one).

    Call in the refresh's transaction: if the refresh rolls back, the rows stay for the next one.
    """
    if not touched.rows:
        return
    pairs = " OR ".join(["(id = %s AND touches = %s)"] * len(touched.rows))
    params: list[int] = [benchmark_id]
    for pk, touches in sorted(touched.rows.values()):
        params += [pk, touches]
    # A row locked right now is being touched again by a submit: it stays, and waiting for it
    # could deadlock with a submit that waits for a row this refresh holds.
    locked = dialect().row_lock(skip_locked=True)
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {_TOUCHED} WHERE id IN "
            f"(SELECT id FROM {_TOUCHED} WHERE benchmark_id = %s AND ({pairs}){locked})",
            params,
        )
