"""A benchmark's change key, and its whole-benchmark figures computed once per change (docs/design.md §7,
"Researcher pages").

The researcher's pages and their live polls show figures that read every label, candidate or HIT
of a benchmark. They are computed once per change of the benchmark and read from the shared cache
(``CACHES``) under its change key, so a page or a poll with nothing new costs one small
statement whatever the benchmark's size, and any number of open tabs cost the same as one.

The key is read from the database, never from the cache, in one statement: the benchmark's
``BenchmarkChanges`` counter and the signature of its ``RefreshTouched`` rows (their number, the
sum of their ``touches`` and their highest id). The counter moves in the transaction of every
change a researcher would see (each activity entry, each refresh and bot-signals run, returned and
expired work, a crowd's sync, a split, a re-annotation choice), to a number never given before;
every submit moves the signature in its own transaction, without a row that all submits would wait
on. Between two moves of the counter the touched rows only grow (a submit adds a row or a touch;
only a refresh removes rows, and it moves the counter in the same transaction), so a key never
comes back once the data changed.

Why a cached figure is never stale: the key is read before the figures, each in its own
snapshot, and a change commits its data with the move of its key. A reader that read the key
before a change commits may store figures computed after it under the old key, newer than the key
says, never older; the first reader after the commit reads the new key and computes again.

A claim moves no key (it would make every claim of a benchmark wait on one row): the work in
progress and the open slots a claim changes show at the next change of the benchmark (the next
submit, usually seconds away) or once the cached figures are ``BENCHMARK_FIGURES_MAX_AGE_SECONDS``
old, whichever comes first (the period is part of the figures' key).

Figures kept per target (``benchmark_by_target``; docs/design.md §7, "Incremental figures"): a
whole-benchmark sum recomputed after every submit costs what the benchmark costs. Kept per target
with the snapshot of the change state they were computed at (``ChangeState``), they are brought up
to date by recomputing only the targets changed since: those each move of the counter recorded
(``BenchmarkChangeTargets``, written with the move, in its transaction) and those every new or
grown ``RefreshTouched`` row names (each submit records its target there; where a touch named none,
the targets of the worker's submitted work, found through the hook the collecting room registers,
``register_worker_targets``). A move that recorded no targets, a snapshot older than
``BENCHMARK_FIGURES_BASE_MAX_AGE_SECONDS`` or a cache that lost it computes every target again.
They are kept in buckets of targets with each bucket's sum and the total beside them
(``benchmark_kept``), so bringing them up to date reads and writes the buckets of the targets
changed, and a page that shows some targets' rows reads those targets' buckets alone.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import secrets
import time
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Generic, TypeVar

from django.conf import settings
from django.core.cache import DEFAULT_CACHE_ALIAS, cache, caches
from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone

from annotation.models import Benchmark, BenchmarkChanges, BenchmarkChangeTargets, RefreshTouched, SiteChanges
from annotation.warm import figures_period, figures_warm_queue
from crowdlex.cache import RedisCache
from crowdlex.dialect import dialect
from crowdlex.statements import shaped_rows
from crowdlex.transactions import hold_to_commit, taken_from_hold

T = TypeVar("T")

# How often a reader waiting for figures another reader computes looks for them.
WAIT_STEP_SECONDS = 0.05

# Within one computation of figures (``benchmark_cached``): the change states read and the targets
# changed between two states, by benchmark. A state read earlier in the computation is as good as
# one read now: the figures read after it are as new as it or newer, never older.
_reading: ContextVar[dict[tuple[object, ...], object] | None] = ContextVar("benchmark_figures_reading", default=None)

_CHANGES = BenchmarkChanges._meta.db_table
# annotation/migrations/0021_benchmark_changes.py creates it.
SEQUENCE = "annotation_benchmark_change_seq"
_TOUCHED = RefreshTouched._meta.db_table
_CHANGE_TARGETS = BenchmarkChangeTargets._meta.db_table
_SITE = SiteChanges._meta.db_table
# The id under which the site's change key stands beside the benchmarks' (no benchmark has it).
SITE_KEY_ID = 0
# The id under which the key of every benchmark's changes stands (``every_keys_statement``).
EVERY_KEY_ID = -1


def benchmark_changed(*, benchmark_id: int, target_ids: Iterable[int] | None = None) -> None:
    """Move the benchmark's change key. Call inside the transaction of the change, so the key moves
    when the change commits and not before. ``target_ids``: the only targets whose figures the
    change may move (None: any of them), recorded with the move for the figures kept per target.

    Inside a transaction the move is held and made just before its outermost atomic block commits
    (``crowdlex.transactions.hold_to_commit``), with every other move the transaction asked for: one
    per benchmark, in id order, its targets the union of those asked for (None if any asked for
    every target). The counter row, whose lock lasts to the transaction's end, is then the last row
    every transaction locks, whatever order its code runs in: a transaction that moved a counter and
    went on to lock work (assignments, HITs) would wait on a return or an expiry that locked that
    work first and waits for the counter, a deadlock (docs/design.md §7, "The counter row is locked
    last"). A block that rolls back, to its savepoint or whole, makes none of the moves held inside
    it. Until the commit the key has not moved: nothing in the transaction may read the change key
    of a benchmark whose move it holds (``change_key`` and ``change_state`` refuse). Two changes of
    one benchmark commit one after the other, which the callers' rarity (never a claim or a submit)
    makes free. Outside a transaction the move is made at once."""
    if not hold_to_commit(_make_moves, (benchmark_id, None if target_ids is None else frozenset(target_ids))):
        _move(benchmark_id=benchmark_id, target_ids=target_ids)


def _make_moves(moves: list[tuple[int, frozenset[int] | None]]) -> None:
    """The moves a transaction held, made before it commits: one per benchmark, in id order."""
    merged: dict[int, set[int] | None] = {}
    for benchmark_id, target_ids in moves:
        known = merged.get(benchmark_id, set())
        merged[benchmark_id] = None if target_ids is None or known is None else known | target_ids
    for benchmark_id in sorted(merged):
        targets = merged[benchmark_id]
        _move(benchmark_id=benchmark_id, target_ids=None if targets is None else sorted(targets))


def _moved_before_read(benchmark_id: int) -> None:
    """Make now the moves the transaction holds for ``benchmark_id``, before its change key is read
    in that transaction: held to the commit, the key would not have moved yet, and figures read now
    would be cached under the key of the data before the change (``benchmark_changed``). The counter
    row is then locked from here on, as it was before moves were held; the platform's own code reads
    no key it moves (tests/annotation/test_counter_locked_last.py)."""
    moves = taken_from_hold(_make_moves, lambda move: move[0] == benchmark_id)
    if moves:
        _make_moves(moves)


def _move(*, benchmark_id: int, target_ids: Iterable[int] | None) -> None:
    """Move the counter now; its row stays locked to the transaction's end."""
    # The counter takes a number no change was given before, even one that rolled back: a change
    # that rolls back leaves the counter where it was, and were its figures cached by a reader
    # inside its transaction, the next change would otherwise reach the same number and read them.
    # With chained writes (PostgreSQL) the number is the sequence's next, which no rollback returns;
    # otherwise it is at least the clock's microseconds, which a rolled-back change cannot hold
    # back either (docs/design.md §7, "Researcher pages").
    touched = None if target_ids is None else json.dumps(sorted(set(target_ids)))
    if target_ids is None:
        # Every target's figures are computed again: by a task at the commit, before the first
        # reader (annotation.warm; docs/design.md §7, "Figures warmed after a change").
        figures_warm_queue(benchmark_id=benchmark_id, every_target=True)
    now = timezone.now()
    oldest = now - timedelta(seconds=2 * settings.BENCHMARK_FIGURES_BASE_MAX_AGE_SECONDS)
    if dialect().chains_writes:
        # One statement: the counter takes the sequence's next number, the targets are recorded
        # under it, and the records too old to be read are removed.
        with connection.cursor() as cursor:
            cursor.execute(
                f"WITH moved AS (INSERT INTO {_CHANGES} (benchmark_id, changes) VALUES (%s, nextval('{SEQUENCE}')) "
                f"ON CONFLICT (benchmark_id) DO UPDATE SET changes = nextval('{SEQUENCE}') RETURNING changes), "
                f"pruned AS (DELETE FROM {_CHANGE_TARGETS} WHERE benchmark_id = %s AND created_at < %s) "
                f"INSERT INTO {_CHANGE_TARGETS} (benchmark_id, change, target_ids, created_at) "
                "SELECT %s, changes, %s::jsonb, %s FROM moved",
                [benchmark_id, benchmark_id, oldest, benchmark_id, touched, now],
            )
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {_CHANGES} (benchmark_id, changes) VALUES (%s, %s) "
            f"ON CONFLICT (benchmark_id) DO UPDATE SET changes = CASE WHEN {_CHANGES}.changes >= excluded.changes "
            f"THEN {_CHANGES}.changes + 1 ELSE excluded.changes END RETURNING changes",
            [benchmark_id, time.time_ns() // 1000],
        )
        (change,) = cursor.fetchone()
    BenchmarkChangeTargets.objects.create(
        benchmark_id=benchmark_id, change=change, target_ids=None if touched is None else json.loads(touched)
    )
    BenchmarkChangeTargets.objects.filter(benchmark_id=benchmark_id, created_at__lt=oldest).delete()


def change_key(*, benchmark_id: int) -> str:
    """The benchmark's change key now: equal keys mean equal data (one statement). Inside a
    computation of figures (``benchmark_cached``) it is the change key of the figures key they are
    computed for, read once by the request rather than again by each part."""
    reading = _reading.get()
    if reading is not None:
        known = reading.get(("change-key", benchmark_id))
        if isinstance(known, str):
            return known
    _moved_before_read(benchmark_id)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT changes FROM {_CHANGES} WHERE benchmark_id = %s), COUNT(*), SUM(touches), MAX(id) "
            f"FROM {_TOUCHED} WHERE benchmark_id = %s",
            [benchmark_id, benchmark_id],
        )
        changes, touched, touches, highest = cursor.fetchone()
    return _change_key_text(changes, touched, touches, highest)


def _change_key_text(changes: Any, touched: Any, touches: Any, highest: Any) -> str:
    return f"{changes or 0}.{touched}.{touches or 0}.{highest or 0}"


def change_keys_statement(benchmarks: str) -> str:
    """One statement reading the change key (as ``change_key`` reads it) of each benchmark whose id
    the query ``benchmarks`` selects (one column, ``id``): rows of (id, the key's four parts), read
    by ``change_keys_of``. A benchmark that does not exist has no row."""
    return (
        f"SELECT b.id, (SELECT changes FROM {_CHANGES} WHERE benchmark_id = b.id), COUNT(t.id), SUM(t.touches), "
        f"MAX(t.id) FROM ({benchmarks}) b LEFT JOIN {_TOUCHED} t ON t.benchmark_id = b.id GROUP BY b.id"
    )


def site_changed() -> None:
    """Move the site's change key (``SiteChanges``; docs/design.md §7, "Kept pages"): call inside the
    transaction of a change that a page outside one benchmark shows (the benchmarks' list, an
    account's name on the access page), after its write. As ``benchmark_changed``, on PostgreSQL the
    counter takes the sequence's next number, so a change that rolls back never gives it twice."""
    following = f"nextval('{SEQUENCE}')" if dialect().chains_writes else f"{_SITE}.changes + 1"
    first = f"nextval('{SEQUENCE}')" if dialect().chains_writes else "1"
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {_SITE} (id, changes) VALUES (1, {first}) "
            f"ON CONFLICT (id) DO UPDATE SET changes = {following}"
        )


def site_keys_statement(benchmarks: str) -> str:
    """``change_keys_statement`` with one row more, always: the site's change key, under
    ``SITE_KEY_ID`` (its counter 0 before the first move)."""
    return (
        f"{change_keys_statement(benchmarks)} UNION ALL "
        f"SELECT {SITE_KEY_ID}, (SELECT changes FROM {_SITE} WHERE id = 1), 0, NULL, NULL"
    )


def every_keys_statement() -> str:
    """One statement reading the site's change key (under ``SITE_KEY_ID``) and a key that moves with
    every change of every benchmark (under ``EVERY_KEY_ID``), in ``change_keys_statement``'s rows: the
    sum of the benchmarks' counters and the number, touches and highest id of every touched row. A
    counter only grows (the sequence's next number, or one more), so the sum grows with each move;
    between two moves the touched rows only grow (a refresh that removes some moves its counter);
    only a benchmark's deletion takes a counter away, and it moves the site's key. So the pair never
    comes back once anything a benchmark or the site shows changed (docs/design.md §7, "Kept pages")."""
    return (
        f"SELECT {EVERY_KEY_ID}, (SELECT SUM(changes) FROM {_CHANGES}), COUNT(t.id), SUM(t.touches), MAX(t.id) "
        f"FROM {_TOUCHED} t UNION ALL "
        f"SELECT {SITE_KEY_ID}, (SELECT changes FROM {_SITE} WHERE id = 1), 0, NULL, NULL"
    )


def change_keys_of(rows: Iterable[tuple[Any, ...]]) -> dict[int, str]:
    """The change key of each benchmark, from the rows of ``change_keys_statement``."""
    return {row[0]: _change_key_text(*row[1:]) for row in rows}


def figures_key(*, benchmark_id: int) -> str:
    """The version of the benchmark's cached figures: its change key and the period of
    ``BENCHMARK_FIGURES_MAX_AGE_SECONDS`` it falls in (so work claimed since shows within it). Also
    the ETag of the live figures (one statement; none after the first inside ``one_figures_key``)."""
    page = _page_keys.get()
    if page is not None and benchmark_id in page:
        return page[benchmark_id]
    key = f"{change_key(benchmark_id=benchmark_id)}.{figures_period()}"
    if page is not None:
        page[benchmark_id] = key
    return key


# The figures key of each benchmark a page read, while it is built (``one_figures_key``).
_page_keys: ContextVar[dict[int, str] | None] = ContextVar("benchmark_page_figures_keys", default=None)
# What a page read of the shared cache, and wrote there, by cache key, while it is built
# (``one_figures_key``; ``page_cache_get``); ``_ABSENT`` for a key the cache did not hold.
_page_reads: ContextVar[dict[str, Any] | None] = ContextVar("benchmark_page_cache_reads", default=None)
_ABSENT = object()

V = TypeVar("V", bound=Callable[..., Any])


def one_figures_key(view: V) -> V:
    """A page that shows one state of each benchmark it reads: its parts (counts, panels, fragments)
    read the benchmark's ``figures_key`` once between them, one statement rather than one a part,
    and each entry of the shared cache once between them (``page_cache_get``), those known
    together in one round trip (``page_cache_read_ahead``). Only for reading pages (GET, HEAD): a
    request that writes reads the key after its write."""

    @functools.wraps(view)
    def wrapper(request: Any, *args: Any, **kwargs: Any) -> Any:
        if request.method not in ("GET", "HEAD"):
            return view(request, *args, **kwargs)
        # The keys may be read already: a kept page's layer reads them before the view
        # (``one_figures_key_known``), and the page's computations of figures still share one reading.
        known = _page_keys.get() is not None
        token, reads = (None, None) if known else (_page_keys.set({}), _page_reads.set({}))
        # The page's computations of figures share one read of the change state, of what changed
        # since and of the figures kept per target (``benchmark_kept``): a page that reads several
        # kept figures brings them up to date together, and writes them in one round trip.
        # Labelled by the page, which learns what it reads together (``_READ_TOGETHER``).
        reading = _reading.set({("label",): view.__qualname__}) if _reading.get() is None else None
        try:
            return view(request, *args, **kwargs)
        finally:
            if reading is not None:
                try:
                    _flush()
                finally:
                    _reading.reset(reading)
            if reads is not None and token is not None:
                _page_reads.reset(reads)
                _page_keys.reset(token)

    return wrapper  # type: ignore[return-value]


def one_figures_key_known(keys: dict[int, str], view: Callable[[], T]) -> T:
    """``view()`` built as a page under ``one_figures_key``, with the figures key of each benchmark
    in ``keys`` already read (by ``crowdlex.kept_pages``, before the view read anything, so the
    figures it computes are stored under a key read before them): no statement of its own for them.
    Only for reading pages (GET, HEAD)."""
    if _page_keys.get() is not None:
        return view()
    token, reads = _page_keys.set(dict(keys)), _page_reads.set({})
    try:
        return view()
    finally:
        _page_reads.reset(reads)
        _page_keys.reset(token)


def page_cache_get(key: str) -> Any:
    """The shared cache's entry ``key`` (None when it holds none), read once per page built under
    ``one_figures_key`` (one state of the page's figures, and no second round trip for a part that
    reads what another read, e.g. each export format's check of the label count), or read ahead
    with others (``page_cache_read_ahead``). Outside such a page, read from the cache each time."""
    reads = _page_reads.get()
    if reads is None:
        return cache.get(key)
    found = reads.get(key, _ABSENT)
    if found is _ABSENT and key not in reads:
        found = reads[key] = cache.get(key, _ABSENT)
    return None if found is _ABSENT else found


def page_cache_read_ahead(keys: Iterable[str]) -> None:
    """Read the entries ``keys`` of the shared cache in one round trip (MGET), for the parts of a page
    built under ``one_figures_key`` that read them next (``page_cache_get``): entries a page knows
    it reads together cost one round trip, not one each. Outside such a page, nothing."""
    reads = _page_reads.get()
    if reads is None:
        return
    wanted = list(dict.fromkeys(key for key in keys if key not in reads))
    if not wanted:
        return
    found = cache.get_many(wanted)
    for key in wanted:
        reads[key] = found.get(key, _ABSENT)


def page_cache_set(key: str, value: Any, timeout: int) -> None:
    """Store ``value`` under ``key`` in the shared cache; a page built under ``one_figures_key``
    reads it back from what it wrote (``page_cache_get``)."""
    cache.set(key, value, timeout=timeout)
    reads = _page_reads.get()
    if reads is not None:
        reads[key] = value


def benchmark_figures_cache_key(*, benchmark_id: int, key: str, name: str) -> str:
    """The cache key of the benchmark's figures ``name`` at its figures key ``key`` (``benchmark_cached``)."""
    return f"benchmark-figures:{benchmark_id}:{key}:{name}"


def benchmark_cached(*, benchmark: Benchmark | int, name: str, compute: Callable[[], T], key: str | None = None) -> T:
    """``compute()`` as of the benchmark's ``figures_key`` (read now when not given: read it before
    anything the figures come from), from the shared cache when it holds it, else computed and
    stored. ``name`` names the figures and every argument they depend on besides the benchmark."""
    benchmark_id = benchmark if isinstance(benchmark, int) else benchmark.pk
    key = key if key is not None else figures_key(benchmark_id=benchmark_id)
    cache_key = benchmark_figures_cache_key(benchmark_id=benchmark_id, key=key, name=name)
    found = page_cache_get(cache_key)
    if found is not None:
        return found[0]  # type: ignore[no-any-return]
    # One reader computes; the others (every open tab polls at once after a change) wait for its
    # result rather than each reading the whole benchmark again.
    computing = f"{cache_key}:computing"
    if not cache.add(computing, 1, timeout=settings.BENCHMARK_FIGURES_WAIT_SECONDS):
        deadline = time.monotonic() + settings.BENCHMARK_FIGURES_WAIT_SECONDS
        while time.monotonic() < deadline:
            time.sleep(WAIT_STEP_SECONDS)
            found = cache.get(cache_key)
            if found is not None:
                return found[0]  # type: ignore[no-any-return]
            if cache.get(computing) is None:
                break  # the reader computing them failed: compute here
    # The figures kept per target that this computation brings up to date read the change state and
    # what changed since once between them (``benchmark_kept``), not once each.
    # Labelled by the figures' kind (their name before any argument: a day, a split, a stamp), which
    # learns what it reads together (``_READ_TOGETHER``; a bounded number of labels).
    reading = _reading.set({("label",): name.split(":", 1)[0]}) if _reading.get() is None else None
    # The figures key ends with its period: what comes before it is the change key it was read at.
    _reading.get().setdefault(("change-key", benchmark_id), key.rsplit(".", 1)[0])  # type: ignore[union-attr]
    stored = False
    try:
        value = compute()
        # In a tuple: figures that are None are cached too. Stored with the figures kept per target
        # the computation wrote, and the mark of computing dropped, in one round trip.
        _flush(stored=(cache_key, (value,), settings.BENCHMARK_FIGURES_MAX_AGE_SECONDS), dropped=[computing])
        stored = True
    finally:
        if reading is not None:
            _reading.reset(reading)
        if not stored:
            cache.delete(computing)
    return value


def computed_once(name: str, compute: Callable[[], T]) -> T:
    """``compute()`` once per computation of figures (``benchmark_cached``): a second call with the same
    ``name`` inside it returns the first one's answer; outside one, computed each time."""
    reading = _reading.get()
    if reading is None:
        return compute()
    key = ("once", name)
    if key not in reading:
        reading[key] = compute()
    return reading[key]  # type: ignore[return-value]


# ---- figures kept per target (docs/design.md §7, "Incremental figures") ----

P = TypeVar("P")
S = TypeVar("S")

# The collecting room's answer to "which targets hold the submitted work of these workers in this
# benchmark" (``hits`` registers it): the rooms below it know no HIT.
_worker_targets: list[Callable[[int, set[int]], set[int]]] = []


def register_worker_targets(find: Callable[[int, set[int]], set[int]]) -> None:
    """Tell the figures kept per target how to find the targets of workers' submitted work:
    ``find(benchmark_id, worker_ids)``."""
    _worker_targets[:] = [find]


@dataclass(frozen=True)
class ChangeState:
    """What a benchmark's change state was (one statement, ``change_state``): its counter, its
    touched rows as (worker, row, touches), the targets each row's touches named (by row; None: not
    named), and when it was read."""

    changes: int
    touched: frozenset[tuple[int, int, int]]
    read_at: float
    touched_targets: dict[int, frozenset[int] | None] = field(default_factory=dict, compare=False)


def change_state(*, benchmark_id: int) -> ChangeState:
    """The benchmark's change state now (one statement)."""
    _moved_before_read(benchmark_id)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT counter.changes, touched.worker_id, touched.id, touched.touches, touched.target_ids "
            f"FROM (SELECT (SELECT changes FROM {_CHANGES} WHERE benchmark_id = %s) AS changes) counter "
            f"LEFT JOIN {_TOUCHED} touched ON touched.benchmark_id = %s",
            [benchmark_id, benchmark_id],
        )
        rows = cursor.fetchall()
    touched = frozenset((worker, row, touches) for _, worker, row, touches, _ in rows if row is not None)
    targets = {row: _target_list(target_ids) for _, _, row, _, target_ids in rows if row is not None}
    return ChangeState(changes=rows[0][0] or 0, touched=touched, read_at=time.time(), touched_targets=targets)


def _target_list(stored: object) -> frozenset[int] | None:
    """A touched row's targets as the database gives them (a list, or JSON text where the driver
    leaves it as such)."""
    if stored is None:
        return None
    if isinstance(stored, str | bytes):
        stored = json.loads(stored)
    return frozenset(int(target_id) for target_id in stored)  # type: ignore[attr-defined]


def targets_changed(*, benchmark_id: int, since: ChangeState, now: ChangeState) -> set[int] | None:
    """The targets whose figures may differ between the states ``since`` and ``now`` (None: any).

    Exact for every move of the counter between them (each recorded its targets in its own
    transaction, ``benchmark_changed``), and for every submit: a submit adds or grows its worker's
    touched row, and a row only goes with a refresh, which records the targets of that worker's
    work. A touched row names the targets of the submits it records (``RefreshTouched.target_ids``,
    written in each submit's own statement: bounded by the submits since the last refresh); where a
    touch named none, the targets of the worker are those of all its submitted work in the benchmark,
    as the refresh of touched work reads them (bounded by the worker's work, not by the benchmark)."""
    return _targets_changed(benchmark_id, since, now, _change_records_read)


# The targets each move of the counter recorded, as (change, target ids or None: every target).
ChangeRecords = list[tuple[int, list[int] | None]]


def _change_records_read(benchmark_id: int, after: int, upto: int) -> ChangeRecords:
    """The moves of the benchmark's counter after ``after`` up to ``upto`` and the targets each named
    (one statement, built by the ORM once per process: ``crowdlex.statements.shaped_rows``)."""
    return shaped_rows(_change_record_rows, benchmark_id, after, upto)  # type: ignore[return-value]


def _change_record_rows(benchmark_id: int, after: int, upto: int) -> QuerySet[BenchmarkChangeTargets, tuple[Any, ...]]:
    return (
        BenchmarkChangeTargets.objects.filter(benchmark_id=benchmark_id, change__gt=after, change__lte=upto)
        .values_list("change", "target_ids")
        .order_by()
    )


def _targets_changed(
    benchmark_id: int, since: ChangeState, now: ChangeState, records: Callable[[int, int, int], ChangeRecords]
) -> set[int] | None:
    if now.read_at - since.read_at > settings.BENCHMARK_FIGURES_BASE_MAX_AGE_SECONDS:
        return None
    changed: set[int] = set()
    if now.changes != since.changes:
        for _, target_ids in records(benchmark_id, since.changes, now.changes):
            if target_ids is None:
                return None
            changed.update(target_ids)
    workers = set()
    for worker, row, _ in now.touched - since.touched:
        named = now.touched_targets.get(row)
        if named is None:
            workers.add(worker)
        else:
            changed |= named
    if workers:
        if not _worker_targets:
            return None
        changed |= _worker_targets[0](benchmark_id, workers)
    return changed


# Targets kept together in one cache entry (a bucket: ids ``n * BUCKET_TARGETS`` up to the next
# multiple): a change reads and writes the buckets of the targets it touched, not every target's figures.
BUCKET_TARGETS = 64


@dataclass(frozen=True)
class _Index(Generic[S]):
    """The cache entry that says what a benchmark's figures kept per target are: the change state
    they were brought up to date at, when every target was last computed (``base_at``), and each
    bucket's entry (a token naming its cache key: a bucket is never written again under a key, so
    an index and the buckets it names always agree) with its targets' summed figures and their
    total over every bucket."""

    state: ChangeState
    base_at: float
    buckets: dict[int, tuple[str, S | None]]
    total: S | None


class KeptFigures(Generic[P, S]):
    """A benchmark's figures kept per target, up to date as of one read (``benchmark_kept``): their
    ``total`` over every target (the summary the caller's ``summarise`` and ``combine`` make, kept
    beside the figures and brought up to date with the buckets a change touched), and the figures
    of any targets (``of``: only their buckets are read) or of all of them (``all``)."""

    def __init__(
        self,
        *,
        prefix: str,
        index: _Index[S],
        loaded: dict[int, dict[int, P]],
        compute: Callable[[list[int] | None], dict[int, P]],
        memo: dict[tuple[object, ...], object] | None = None,
    ) -> None:
        self._prefix = prefix
        self._index = index
        self._loaded = loaded
        self._compute = compute
        # The buckets the computation of figures read or wrote already, by cache key (``_kept_reading``).
        self._memo: dict[tuple[object, ...], object] = {} if memo is None else memo
        # Buckets lost from the cache and counted again as of now (``_buckets``).
        self.recounted: set[int] = set()

    @property
    def total(self) -> S:
        return self._index.total  # type: ignore[return-value]

    def _buckets(self, numbers: Iterable[int]) -> dict[int, dict[int, P]]:
        wanted = [number for number in set(numbers) if number in self._index.buckets]
        keys = {
            number: _bucket_key(self._prefix, number, self._index.buckets[number][0])
            for number in wanted
            if number not in self._loaded
        }
        unread = [key for key in keys.values() if ("bucket", key) not in self._memo]
        found = cache.get_many(unread) if unread else {}
        for key in unread:
            self._memo[("bucket", key)] = found.get(key, _ABSENT)
        missing = []
        for number, key in keys.items():
            bucket = self._memo[("bucket", key)]
            if bucket is _ABSENT:
                missing.append(number)
            else:
                self._loaded[number] = bucket  # type: ignore[assignment]
        if missing:
            # Lost from the cache (evicted): counted again from the rows, as of now.
            self.recounted.update(missing)
            self._loaded.update(_by_bucket(self._compute(_bucket_ranges(missing)), missing))
        return {number: self._loaded[number] for number in wanted}

    def of(self, target_ids: Iterable[int]) -> dict[int, P]:
        """The figures of ``target_ids`` (a target without figures is left out)."""
        ids = set(target_ids)
        buckets = self._buckets(target_id // BUCKET_TARGETS for target_id in ids)
        return {
            target_id: figures
            for bucket in buckets.values()
            for target_id, figures in bucket.items()
            if target_id in ids
        }

    def all(self) -> dict[int, P]:
        """Every target's figures."""
        found: dict[int, P] = {}
        for _, bucket in sorted(self._buckets(self._index.buckets).items()):
            found.update(bucket)
        return found


def _bucket_key(prefix: str, number: int, token: str) -> str:
    return f"{prefix}:{number}:{token}"


def _bucket_ranges(numbers: Iterable[int]) -> list[int]:
    """Every target id the buckets ``numbers`` may hold (``compute`` leaves out those that are not
    the benchmark's)."""
    return [
        target_id
        for number in sorted(numbers)
        for target_id in range(number * BUCKET_TARGETS, (number + 1) * BUCKET_TARGETS)
    ]


def _by_bucket(figures: dict[int, P], numbers: Iterable[int] = ()) -> dict[int, dict[int, P]]:
    """``figures`` by bucket, with an empty bucket for each of ``numbers`` that holds none."""
    buckets: dict[int, dict[int, P]] = {number: {} for number in numbers}
    for target_id in sorted(figures):
        buckets.setdefault(target_id // BUCKET_TARGETS, {})[target_id] = figures[target_id]
    return buckets


# The figures kept per target that the last computation of figures of a label (its page's view, or
# the figures' name) read, by that label and the name of the one it read first (``_kept_index``): the
# next such computation reads the index of every one of them in one round trip (MGET), and the
# buckets changed since of all of them in one more. Learnt as they are read (a page's first request
# reads them one by one), by names, so it holds no more entries than the code has pages and kept figures.
_READ_TOGETHER: dict[tuple[str, str], dict[str, None]] = {}


def _kept_prefix(benchmark_id: int, name: str) -> str:
    # Named apart from the single entry that held every target before, which a process still running
    # an earlier version may read.
    return f"benchmark-kept:{benchmark_id}:{name}"


def _kept_reading() -> dict[tuple[object, ...], object]:
    """What the computation of figures read and changed of the figures kept per target (the
    change state, the targets changed since each index's state, the indexes and the buckets): the
    computation's own (``benchmark_cached``, ``one_figures_key``), or one for this call alone."""
    reading = _reading.get()
    return {} if reading is None else reading


def _change_records(reading: dict[tuple[object, ...], object], benchmark_id: int) -> Any:
    """The reader of the counter's moves for this computation: read once for the earliest state
    any of its kept figures were brought up to date at (``_prefetch``), filtered for each."""

    def records(benchmark_id: int, after: int, upto: int) -> ChangeRecords:
        known = reading.get(("records", benchmark_id))
        if isinstance(known, tuple) and known[0] <= after and known[1] == upto:
            return [(change, targets) for change, targets in known[2] if change > after]
        found = _change_records_read(benchmark_id, after, upto)
        reading[("records", benchmark_id)] = (after, upto, found)
        return found

    return records


def _changed_since(
    reading: dict[tuple[object, ...], object], benchmark_id: int, index: _Index[Any], now: ChangeState
) -> set[int] | None:
    """The targets changed since ``index``'s state (None: every target, or kept figures too old),
    found once per computation for each state an index was brought up to date at."""
    if now.read_at - index.base_at > settings.BENCHMARK_FIGURES_BASE_MAX_AGE_SECONDS:
        return None
    between = ("changed", benchmark_id, index.state.changes, index.state.touched, index.state.read_at)
    if between in reading:
        found = reading[between]
        return None if found is None else set(found)  # type: ignore[call-overload]
    changed = _targets_changed(benchmark_id, index.state, now, _change_records(reading, benchmark_id))
    reading[between] = None if changed is None else frozenset(changed)
    return changed


def _kept_index(
    reading: dict[tuple[object, ...], object], benchmark_id: int, name: str, now: ChangeState
) -> _Index[Any] | None:
    """The index of the benchmark's figures kept as ``name``, read once per computation. The first
    read reads with it the indexes of every kept figure read together with it before
    (``_READ_TOGETHER``) in one round trip, and then the buckets each of them changed since in one more."""
    prefix = _kept_prefix(benchmark_id, name)
    leader = reading.get(("kept-leader", benchmark_id))
    if isinstance(leader, tuple) and ("index", prefix) in reading:
        _READ_TOGETHER.setdefault(leader, {})[name] = None
        return reading[("index", prefix)]  # type: ignore[return-value]
    others: list[str] = []
    if not isinstance(leader, tuple):
        # The first kept figure this computation reads: those read with it last time by a
        # computation of the same label (the page, or the figures) are read with it now, and what
        # this computation reads is learnt afresh (another scheme's names drop out).
        leader = reading[("kept-leader", benchmark_id)] = (str(reading.get(("label",), "")), name)
        # A copy taken at once: another thread may be adding to it.
        learnt = list(_READ_TOGETHER.get(leader, ()))
        others = [_kept_prefix(benchmark_id, each) for each in learnt if each != name]
        _READ_TOGETHER[leader] = {name: None}
    else:
        _READ_TOGETHER.setdefault(leader, {})[name] = None
    wanted = [prefix, *(each for each in others if ("index", each) not in reading)]
    found = cache.get_many(wanted)
    indexes: dict[str, _Index[Any]] = {}
    for each in wanted:
        index = found.get(each)
        # None, or kept in another shape by an earlier version: counted again.
        reading[("index", each)] = index if isinstance(index, _Index) else None
        if isinstance(index, _Index):
            indexes[each] = index
    _prefetch(reading, benchmark_id, indexes, now)
    return reading[("index", prefix)]  # type: ignore[return-value]


def _prefetch(
    reading: dict[tuple[object, ...], object], benchmark_id: int, indexes: dict[str, _Index[Any]], now: ChangeState
) -> None:
    """Read the buckets that the targets changed since each of ``indexes`` fall in, all in one round
    trip, and the counter's moves since the earliest of their states in one statement."""
    earliest = [
        index.state.changes
        for index in indexes.values()
        if index.state.changes != now.changes
        and now.read_at - index.base_at <= settings.BENCHMARK_FIGURES_BASE_MAX_AGE_SECONDS
        and now.read_at - index.state.read_at <= settings.BENCHMARK_FIGURES_BASE_MAX_AGE_SECONDS
    ]
    if earliest:
        _change_records(reading, benchmark_id)(benchmark_id, min(earliest), now.changes)
    keys = []
    for prefix, index in indexes.items():
        changed = _changed_since(reading, benchmark_id, index, now)
        for number in sorted({target_id // BUCKET_TARGETS for target_id in changed or ()}):
            if number in index.buckets:
                key = _bucket_key(prefix, number, index.buckets[number][0])
                if ("bucket", key) not in reading:
                    keys.append(key)
    if keys:
        found = cache.get_many(keys)
        for key in keys:
            reading[("bucket", key)] = found.get(key, _ABSENT)


def benchmark_kept(
    *,
    benchmark_id: int,
    name: str,
    compute: Callable[[list[int] | None], dict[int, P]],
    summarise: Callable[[Iterable[P]], S] | None = None,
    combine: Callable[[Iterable[S]], S] | None = None,
    take: Callable[[S, Iterable[P]], S] | None = None,
    replace: Callable[[S, Iterable[P], Iterable[P]], S | None] | None = None,
) -> KeptFigures[P, S]:
    """Figures of the benchmark kept per target, brought up to date: ``compute(target_ids)`` gives
    them for those targets (every target when None; a target left out of the answer has none), and
    only the targets changed since the kept ones were computed are computed again
    (``targets_changed``). They are kept in buckets of ``BUCKET_TARGETS`` targets, each with its
    summary (``summarise`` of its targets' figures), and the total of every bucket's summary
    (``combine``) is kept beside them, so a change reads and writes the buckets of the targets it
    touched and the index, whatever the benchmark's size. ``name`` names the figures and how they
    are summed. ``take(total, figures)``: the total less some targets' figures, where summaries
    are exact (counts): then the index keeps the total alone, and a change takes the changed
    targets' figures as kept out of it and adds their new ones, so it costs what they cost and not
    a sum over every bucket (a bucket lost from the cache sums every target again).
    ``replace(total, taken, added)``: the same for summaries that hold a highest figure as well
    (a highest id, which a submit only raises): the total with the figures ``taken`` replaced by
    ``added``, or None when the figures taken out held the highest one and the new ones do not
    reach it (a delete): then, and only then, every target is computed again.

    Inside one computation of figures (``benchmark_cached``, a page under ``one_figures_key``) the
    change state, the moves of the counter since, each index and each bucket are read once for
    every kept figure, the indexes read together before in one round trip and their changed buckets
    in one more (``_kept_index``), and what it writes is sent in one round trip at its end
    (``_flush``).

    Equal to ``compute(None)`` whatever changed in between: the state is read before the figures,
    so figures newer than their state are computed again at the next read, never missed; the index
    names each bucket's entry by a token of its own, so the figures, their summaries and their total
    read together are those written together."""
    prefix = _kept_prefix(benchmark_id, name)
    reading = _kept_reading()
    read = reading.get(("state", benchmark_id))
    now = read if isinstance(read, ChangeState) else change_state(benchmark_id=benchmark_id)
    reading[("state", benchmark_id)] = now
    index: _Index[S] | None = _kept_index(reading, benchmark_id, name, now)
    changed = None if index is None else _changed_since(reading, benchmark_id, index, now)

    # Summed by difference: the index keeps the total alone, no bucket's summary.
    by_difference = (take is not None or replace is not None) and summarise is not None and combine is not None

    def summary(figures: dict[int, P]) -> S | None:
        return None if summarise is None or by_difference else summarise(figures.values())

    def total(summaries: Iterable[S | None]) -> S | None:
        return None if combine is None else combine(each for each in summaries if each is not None)

    numbers = set() if changed is None else {target_id // BUCKET_TARGETS for target_id in changed}
    before: dict[int, dict[int, P]] = {}
    if index is not None and changed:
        kept = KeptFigures(prefix=prefix, index=index, loaded={}, compute=compute, memo=reading)
        before = kept._buckets(numbers)
        if by_difference and kept.recounted:
            changed = None  # a changed bucket lost: its figures as kept are not known to take out

    def every_target(index: _Index[S] | None) -> KeptFigures[P, S]:
        buckets = _by_bucket(compute(None))
        written = {number: (secrets.token_hex(6), summary(figures)) for number, figures in buckets.items()}
        superseded = [] if index is None else [_bucket_key(prefix, n, e[0]) for n, e in index.buckets.items()]
        whole: S | None
        if by_difference and summarise is not None and combine is not None:
            whole = combine(summarise(figures.values()) for figures in buckets.values())
        else:
            whole = total(entry[1] for entry in written.values())
        index = _Index(now, now.read_at, written, whole)
        _write(prefix, index, buckets, superseded)
        return KeptFigures(prefix=prefix, index=index, loaded=buckets, compute=compute, memo=reading)

    if index is None or changed is None:
        return every_target(index)
    if not changed:
        if (index.state.changes, index.state.touched) != (now.changes, now.touched):
            index = dataclasses.replace(index, state=now)
            _write(prefix, index, {}, [])
        return KeptFigures(prefix=prefix, index=index, loaded={}, compute=compute, memo=reading)
    buckets = {number: dict(figures) for number, figures in before.items()}
    for number in numbers - set(buckets):
        buckets[number] = {}  # targets new since (an import)
    ids = sorted(changed)
    taken = [
        buckets[target_id // BUCKET_TARGETS].pop(target_id)
        for target_id in ids
        if target_id in buckets[target_id // BUCKET_TARGETS]
    ]
    added = compute(ids)
    for target_id, computed in added.items():
        buckets[target_id // BUCKET_TARGETS][target_id] = computed
    entries = dict(index.buckets)
    superseded = [_bucket_key(prefix, number, entries[number][0]) for number in numbers if number in entries]
    for number, bucket in buckets.items():
        if bucket:
            entries[number] = (secrets.token_hex(6), summary(bucket))
        else:
            entries.pop(number, None)
    summed: S | None
    if replace is not None and index.total is not None:
        summed = replace(index.total, taken, added.values())
        if summed is None:
            return every_target(index)  # the highest figure taken out: not known from the kept ones
    elif take is not None and summarise is not None and combine is not None and index.total is not None:
        summed = combine([take(index.total, taken), summarise(added.values())])
    else:
        summed = total(entry[1] for entry in entries.values())
    index = _Index(now, index.base_at, entries, summed)
    _write(prefix, index, {number: figures for number, figures in buckets.items() if figures}, superseded)
    return KeptFigures(prefix=prefix, index=index, loaded=buckets, compute=compute, memo=reading)


def _kept_seconds() -> int:
    # Every target is computed again once the base is this old: the buckets written with it last as long.
    return settings.BENCHMARK_FIGURES_BASE_MAX_AGE_SECONDS + settings.BENCHMARK_FIGURES_WAIT_SECONDS


# A write of the shared cache: (key, value, timeout in seconds), or (key, _DELETE, 0) to drop the key.
_Write = tuple[str, Any, int]
_DELETE = object()


def _write(prefix: str, index: _Index[S], buckets: dict[int, dict[int, P]], superseded: list[str]) -> None:
    """Store the buckets, then the index that names them, then drop the buckets it no longer names
    (a reader that read the index before and misses one counts that bucket's targets again), in
    that order. Inside a computation of figures they are kept in it (read back from there) and
    sent with its other writes in one round trip at its end (``_flush``); else sent now, in one."""
    writes: list[_Write] = [
        (_bucket_key(prefix, number, index.buckets[number][0]), figures, _kept_seconds())
        for number, figures in buckets.items()
    ]
    writes.append((prefix, index, _kept_seconds()))
    writes += [(key, _DELETE, 0) for key in superseded]
    reading = _reading.get()
    if reading is None:
        _send(writes)
        return
    reading[("index", prefix)] = index
    for key, value, _ in writes[:-1]:
        if value is not _DELETE:
            reading[("bucket", key)] = value
    pending = reading.setdefault(("pending",), [])
    pending.extend(writes)  # type: ignore[attr-defined]


def _flush(*, stored: _Write | None = None, dropped: Iterable[str] = ()) -> None:
    """Send the writes the computation of figures kept (``_write``), then ``stored`` (a computed
    entry, which a page reads back from what it wrote: ``page_cache_get``), then drop ``dropped``,
    in one round trip."""
    reading = _reading.get()
    writes: list[_Write] = [] if reading is None else reading.pop(("pending",), [])  # type: ignore[assignment]
    if stored is not None:
        writes.append(stored)
    writes += [(key, _DELETE, 0) for key in dropped]
    if writes:
        _send(writes)
    reads = _page_reads.get()
    if stored is not None and reads is not None:
        reads[stored[0]] = stored[1]


def _send(writes: list[_Write]) -> None:
    """``writes`` in order, in one pipeline where the cache is Redis (not a transaction: the order
    is what matters, as ``_write`` says); one call each with any other cache."""
    shared = caches[DEFAULT_CACHE_ALIAS]
    if not isinstance(shared, RedisCache):
        for key, value, timeout in writes:
            if value is _DELETE:
                cache.delete(key)
            else:
                cache.set(key, value, timeout=timeout)
        return
    pipeline = shared.redis_client().pipeline(transaction=False)
    for key, value, timeout in writes:
        if value is _DELETE:
            pipeline.delete(shared.make_and_validate_key(key))
        else:
            shared.pipeline_set(pipeline, key, value, timeout)
    pipeline.execute()


def benchmark_by_target(
    *, benchmark_id: int, name: str, compute: Callable[[list[int] | None], dict[int, P]]
) -> dict[int, P]:
    """Figures of the benchmark kept per target (``benchmark_kept``), every target's: ``compute(target_ids)``
    gives them for those targets (every target when None; a target left out of the answer has none),
    and only the targets changed since the kept ones were computed are computed again."""
    return benchmark_kept(benchmark_id=benchmark_id, name=name, compute=compute).all()


def _site_row_changed(sender: Any, **kwargs: Any) -> None:
    site_changed()


def _site_worker_changed(sender: Any, created: bool = False, **kwargs: Any) -> None:
    # A new worker shows nowhere outside its benchmarks before its account does (the account's save
    # moves the key); a worker blocked, unblocked or edited does (the people's pages).
    if not created:
        site_changed()


def _site_groups_changed(sender: Any, action: str, **kwargs: Any) -> None:
    if action in ("post_add", "post_remove", "post_clear"):
        site_changed()


def connect_site_signals() -> None:
    """Move the site's change key with every save or deletion of what the pages keyed by it show
    (docs/design.md §7, "Kept pages"): benchmarks, their members, accounts and their role groups,
    and workers changed or deleted (the people's pages show whether one is blocked).
    Found through Django's signals, as the kept accounts' stamps are (``crowdlex.accounts``), so an
    edit in the admin or a command moves it as a page's does; a queryset update sends none and calls
    ``site_changed`` itself."""
    from django.contrib.auth.models import Group, User
    from django.db.models.signals import m2m_changed, post_delete, post_save

    from annotation.models import BenchmarkMember, Worker

    for model in (Benchmark, BenchmarkMember, User, Group):
        post_save.connect(_site_row_changed, sender=model, dispatch_uid=f"site-changes-saved-{model.__name__}")
        post_delete.connect(_site_row_changed, sender=model, dispatch_uid=f"site-changes-deleted-{model.__name__}")
    m2m_changed.connect(_site_groups_changed, sender=User.groups.through, dispatch_uid="site-changes-groups")
    post_save.connect(_site_worker_changed, sender=Worker, dispatch_uid="site-changes-saved-Worker")
    post_delete.connect(_site_row_changed, sender=Worker, dispatch_uid="site-changes-deleted-Worker")
