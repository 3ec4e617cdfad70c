"""The floor of a benchmark's work, measured in the same run, and the ratio printed against its goal.

A figure in seconds or cycles per second moves by half from one machine to the next; the ratio of
the platform's time to the floor of the same work on the same machine, in the same run, moves far
less. A floor is the database work the operation cannot avoid, with no framework work around it:

- :func:`copy_floor`: rows written with one ``COPY`` per table into the same tables, with the same
  constraints and indexes (an import's floor);
- :class:`StatementRecorder` and :func:`replay`: the statements an operation ran, with their
  parameters, run again by psycopg2 alone (a view's, a command's, a page's floor); ids the
  operation got back from the database (an ``id`` or ``*_id`` column of a result) are followed, so
  a later statement names the row the replay found or created, not the one of the recording.

:func:`ratio_figure` prints the ratio on a ``FIGURE`` line (``bench.figure``) with the absolute
figures beside it, and :func:`machine` says which machine they were measured on.
"""

from __future__ import annotations

import datetime
import enum
import io
import os
import platform
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from bench import figure, process_cpu_seconds


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine(cursor: Any | None = None) -> str:
    """Cores, CPU model and, given a cursor, the PostgreSQL server's version."""
    text = f"{os.cpu_count()} cores, {cpu_model()}, load average {os.getloadavg()[0]:.2f}"
    if cursor is not None:
        cursor.execute("SHOW server_version")
        text += f", PostgreSQL {cursor.fetchone()[0].split()[0]}"
    return text


def ratio_figure(name: str, measured: float, floor: float, *, goal: float, context: str = "") -> bool:
    """Print ``measured / floor`` (both in the same unit of cost: seconds, or CPU per cycle) on a
    FIGURE line against ``goal`` (at most that many times the floor), the absolute figures after."""
    ratio = measured / floor if floor > 0 else float("inf")
    met = figure(f"{name} against its floor", ratio, "x", goal=goal)
    if context:
        print(f"  {name}: {context}", flush=True)
    return met


# Copying rows ---------------------------------------------------------------------------------


def copy_out(cursor: Any, tables: Sequence[tuple[str, str]]) -> list[tuple[str, bytes]]:
    """Every row of each ``(table, condition)`` in COPY's text format, whole columns in table order."""
    dumps = []
    for table, condition in tables:
        buffer = io.BytesIO()
        cursor.copy_expert(f'COPY (SELECT * FROM "{table}" WHERE {condition}) TO STDOUT', buffer)
        dumps.append((table, buffer.getvalue()))
    return dumps


def copy_floor(connection: Any, dumps: Sequence[tuple[str, bytes]]) -> tuple[float, float | None]:
    """Seconds to COPY ``dumps`` (from :func:`copy_out`) back in one transaction and commit it, on a
    psycopg2 ``connection`` of its own: the floor of writing those rows; and the CPU seconds it
    took, this process's and its PostgreSQL backend's (None when the server runs elsewhere)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    connection.commit()
    backend_before, cpu_before = process_cpu_seconds(backend), time.process_time()
    started = time.perf_counter()
    with connection.cursor() as cursor:
        for table, data in dumps:
            cursor.copy_expert(f'COPY "{table}" FROM STDIN', io.BytesIO(data))
    connection.commit()
    seconds = time.perf_counter() - started
    backend_after, cpu = process_cpu_seconds(backend), time.process_time() - cpu_before
    if backend_before is None or backend_after is None:
        return seconds, None
    return seconds, cpu + backend_after - backend_before


# Recording and replaying statements -----------------------------------------------------------


@dataclass
class Statement:
    sql: str
    params: Any
    many: bool
    # The names of the result's columns and its rows (None when the statement returns none).
    columns: list[str] | None = None
    rows: list[tuple[Any, ...]] | None = None


@dataclass
class StatementRecorder:
    """Records what Django runs on a connection: ``with connection.execute_wrapper(recorder):``."""

    statements: list[Statement] = field(default_factory=list)

    def __call__(self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        result = execute(sql, params, many, context)
        statement = Statement(sql=sql, params=_plain(params), many=many)
        raw = getattr(context["cursor"], "cursor", None)
        description = getattr(raw, "description", None)
        # Server-side cursors (named) cannot be rewound: their rows are left to their reader.
        if description and raw is not None and not getattr(raw, "name", None):
            statement.columns = [column.name for column in description]
            statement.rows = raw.fetchall()
            if statement.rows:
                raw.scroll(0, mode="absolute")
        self.statements.append(statement)
        return result


def _plain(value: Any) -> Any:
    """Parameters as the driver sends them, without the platform's own types (its choices are
    enums), so that a recording can be read back by a process that has no Django."""
    if isinstance(value, enum.Enum):
        return _plain(value.value)
    if isinstance(value, list | tuple):
        return type(value)(_plain(item) for item in value)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def _is_id(column: str) -> bool:
    return column == "id" or column.endswith("_id")


@dataclass
class Replay:
    """How a replay went: statements run, and whether a statement that found rows when recorded
    found none (``short``: the work was gone, e.g. no HIT left to claim)."""

    statements: int = 0
    short: bool = False
    mapping: dict[Any, Any] = field(default_factory=dict)


def _mapped(value: Any, mapping: dict[Any, Any], shift: datetime.timedelta) -> Any:
    if isinstance(value, datetime.datetime):
        return value + shift
    if isinstance(value, list | tuple):
        return type(value)(_mapped(item, mapping, shift) for item in value)
    if isinstance(value, dict):
        return {key: _mapped(item, mapping, shift) for key, item in value.items()}
    if isinstance(value, bool) or not isinstance(value, int | str):
        return value
    return mapping.get(value, value)


def replay(
    cursor: Any,
    statements: Sequence[Statement],
    *,
    mapping: dict[Any, Any] | None = None,
    shift: datetime.timedelta | None = None,
    follow_ids: bool = True,
) -> Replay:
    """Run ``statements`` again on a psycopg2 ``cursor`` (the caller holds the transaction).

    ``mapping`` turns recorded values into those of this replay (a client's user, worker or token
    for another client's); ids in the results are added to it as they come, so a later statement
    follows the row this replay got. Recorded timestamps move by ``shift`` (now - when recorded).
    Without ``follow_ids`` the statements run with their recorded parameters and their rows are
    read and dropped, a few thousand at a time. A recorded ``COPY ... FROM STDIN`` carries its
    data (bytes) as its parameters.
    """
    done = Replay(mapping=dict(mapping or {}))
    shift = shift or datetime.timedelta(0)
    for statement in statements:
        if isinstance(statement.params, bytes):
            cursor.copy_expert(statement.sql, io.BytesIO(statement.params))
            done.statements += 1
            continue
        params = _mapped(statement.params, done.mapping, shift) if follow_ids else statement.params
        if statement.many:
            cursor.executemany(statement.sql, params)
        else:
            cursor.execute(statement.sql, params)
        done.statements += 1
        if not follow_ids:
            if cursor.description is not None:
                while cursor.fetchmany(5000):
                    pass
            continue
        if statement.columns is None or cursor.description is None:
            continue
        rows = cursor.fetchall()
        if statement.rows and not rows:
            done.short = True
            return done
        for recorded, found in zip(statement.rows or [], rows, strict=False):
            for column, old, new in zip(statement.columns, recorded, found, strict=False):
                if _is_id(column) and old != new and isinstance(old, int | str) and not isinstance(old, bool):
                    done.mapping[old] = new
    return done


@contextmanager
def statements_and_copies_recorded(recorder: StatementRecorder) -> Iterator[None]:
    """Every statement the default connection runs and every ``COPY`` ``crowdlex.dialect`` sends
    (``copy_statement``), into ``recorder`` in the order they ran, while the block runs: what a floor
    replays of work that writes rows with COPY (``bench.generate_hits``, ``bench.refresh_backlog``)."""
    from unittest import mock

    from django.db import connection

    from crowdlex.dialect import POSTGRESQL

    copy_rows = POSTGRESQL.copy_rows

    def recorded_copy(model: Any, fields: Any, rows: Any, *, not_null: Any = ()) -> None:
        rows = list(rows)
        recorder.statements.append(copy_statement(model, fields, rows, not_null=not_null))
        copy_rows(model, fields, rows, not_null=not_null)

    with mock.patch.object(POSTGRESQL, "copy_rows", recorded_copy), connection.execute_wrapper(recorder):
        yield


def copy_statement(
    model: Any, fields: Sequence[str], rows: Sequence[Sequence[Any]], *, not_null: Sequence[str] = ()
) -> Statement:
    """A recorded ``COPY`` of ``rows`` into ``model``'s table, as ``crowdlex.dialect`` sends it (``copy_rows``)."""
    import csv

    from django.db import models

    from crowdlex.bulk import column_name

    table = model._meta.db_table
    options = "FORMAT csv"
    if not_null:
        options += f", FORCE_NOT_NULL ({', '.join(column_name(model, name) for name in not_null)})"
    booleans = [
        index for index, name in enumerate(fields) if isinstance(model._meta.get_field(name), models.BooleanField)
    ]
    text = io.StringIO()
    writer = csv.writer(text)
    for row in rows:
        values = list(row)
        for index in booleans:
            if isinstance(values[index], bool):
                values[index] = "true" if values[index] else "false"
        writer.writerow(values)
    columns = ", ".join(column_name(model, name) for name in fields)
    return Statement(
        sql=f'COPY "{table}" ({columns}) FROM STDIN WITH ({options})', params=text.getvalue().encode(), many=False
    )


def psycopg2_connection(url: str) -> Any:
    """A psycopg2 connection of its own to the database of ``url``."""
    import psycopg2
    from psycopg2.extensions import register_adapter
    from psycopg2.extras import Json

    # Django hands JSON values to the driver already adapted; a replay sees dicts only from JSONField
    # defaults built in Python, which psycopg2 must adapt as Django does.
    register_adapter(dict, Json)
    return psycopg2.connect(url)


def replayable(statements: Sequence[Step]) -> list[Step]:
    """``statements`` (sql, params) as recorded from a page, ready for :func:`run_read`: a statement
    the platform prepared on Django's connection (``crowdlex.dialect``: the session's, the account's,
    the access check's) is recorded as its ``EXECUTE``; its ``PREPARE`` is read here from that
    connection and kept with the replay, so the replay prepares it once on its own connection and
    runs the same ``EXECUTE`` (as the platform does). One Django no longer holds prepared is left
    out: a floor left a bit low rather than one that fails. The round trips to the cache among them
    (:class:`CacheCall`) are kept as they are, in their place."""
    prepared = _prepared_on_django()
    kept: list[Step] = []
    for step in statements:
        if isinstance(step, CacheCall):
            kept.append(step)
            continue
        sql, params = step
        name = _executed(sql)
        if name is not None:
            if name not in prepared:
                continue
            _PREPARES[name] = prepared[name]
        kept.append((sql, params))
    return kept


# The PREPARE statement of each prepared statement a replay runs, by name (read by ``replayable``).
_PREPARES: dict[str, str] = {}


def _executed(sql: str) -> str | None:
    """The name of the prepared statement ``sql`` runs, when it is an ``EXECUTE``."""
    words = sql.split(None, 2)
    if len(words) >= 2 and words[0].upper() == "EXECUTE":
        return words[1].split("(", 1)[0]
    return None


def _prepared_on_django() -> dict[str, str]:
    """Name → ``PREPARE`` statement of what Django's open connection holds prepared (none when no
    Django or no open connection: a recording read back elsewhere)."""
    try:
        from django.db import connection
    except ImportError:
        return {}
    raw = getattr(connection, "connection", None)
    if raw is None or getattr(raw, "closed", True):
        return {}
    with raw.cursor() as cursor:
        cursor.execute("SELECT name, statement FROM pg_prepared_statements")
        return dict(cursor.fetchall())


def _prepare(raw: Any, statements: Sequence[tuple[str, Any]]) -> None:
    """Prepare on ``raw`` each statement the replay executes that it does not hold yet: once per
    connection, as the platform does."""
    names = {name for name in (_executed(sql) for sql, _ in statements) if name is not None}
    held = _HELD.setdefault(raw, set())
    if names <= held:
        return
    with raw.cursor() as cursor:
        for name in sorted(names - held):
            cursor.execute(_PREPARES[name])
    raw.commit()
    held |= names


# The names prepared on each psycopg2 connection a replay ran on.
_HELD: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()


def run_read(raw: Any, statements: Sequence[Step], cache: Any = None) -> WorkSplit:
    """Run ``statements`` on the psycopg2 connection ``raw``, fetching every row, then roll back:
    a page's database work with no framework around it. The statements the platform prepared are
    prepared on ``raw`` first (:func:`replayable`; once per connection, and a floor is the best of
    its runs). The page's round trips to the shared cache among them (:class:`CacheCall`) are sent
    in their place by ``cache``, a redis-py client of the floor's own (:func:`replay_cache_call`).
    Returns the seconds spent on each."""
    _prepare(raw, [step for step in statements if not isinstance(step, CacheCall)])
    split = WorkSplit()
    with raw.cursor() as cursor:
        for step in statements:
            started = time.perf_counter()
            if isinstance(step, CacheCall):
                replay_cache_call(cache, step)
                split.cache += time.perf_counter() - started
                split.cache_calls += 1
                continue
            sql, params = step
            cursor.execute(sql, params)
            if cursor.description is not None:
                cursor.fetchall()
            split.sql += time.perf_counter() - started
    raw.rollback()
    return split


@dataclass
class WorkSplit:
    """Seconds a replay spent on the database's statements and on the cache's round trips."""

    sql: float = 0.0
    cache: float = 0.0
    cache_calls: int = 0


# Recording and replaying the shared cache's commands ------------------------------------------


@dataclass(frozen=True)
class CacheCall:
    """One round trip to the shared cache (Redis): one command, or the commands of a pipeline sent
    together (``transaction``: inside MULTI/EXEC, as redis-py's default pipeline). Each command is
    its arguments as redis-py sent them and the options it was given (how to read the answer)."""

    commands: tuple[tuple[tuple[Any, ...], dict[str, Any]], ...]
    pipeline: bool = False
    transaction: bool = False

    @property
    def names(self) -> list[str]:
        """The commands' names, upper case (``GET``, ``MGET``, ``SET``…)."""
        return [_command_name(args) for args, _ in self.commands]


# A step of a page's work: a statement (sql, params) or a round trip to the cache.
Step = tuple[str, Any] | CacheCall


@contextmanager
def cache_calls_recorded(into: list[Any]) -> Iterator[None]:
    """Every round trip a redis-py client of this process makes while the block runs, appended to
    ``into`` as a :class:`CacheCall` (beside whatever else ``into`` records, so the order of the
    statements and the cache's commands is kept). The platform reaches Redis only through Django's
    cache (``crowdlex.cache``; Celery's broker is not used by a measured request), so inside a
    request these are the page's reads and writes of the shared cache, the session's included."""
    from unittest import mock

    from redis.client import Pipeline, Redis

    send, send_pipeline = Redis.execute_command, Pipeline.execute

    def recorded(client: Any, *args: Any, **options: Any) -> Any:
        into.append(CacheCall(commands=((args, dict(options)),)))
        return send(client, *args, **options)

    def recorded_pipeline(pipeline: Any, raise_on_error: bool = True) -> Any:
        if pipeline.command_stack:
            commands = tuple((tuple(args), dict(options)) for args, options in pipeline.command_stack)
            into.append(CacheCall(commands=commands, pipeline=True, transaction=bool(pipeline.transaction)))
        return send_pipeline(pipeline, raise_on_error)

    with (
        mock.patch.object(Redis, "execute_command", recorded),
        mock.patch.object(Pipeline, "execute", recorded_pipeline),
    ):
        yield


# Where a replayed write goes: the same command with the same value, on a key of the floor's own.
SHADOW_PREFIX = "bench-floor:"
# The commands that change a key, by name: where their keys are (1: the first argument after the
# name; "all": every argument; "pairs": every other one, as MSET's). Any other command reads.
_WRITES: dict[str, int | str] = {
    **dict.fromkeys(["SET", "SETEX", "PSETEX", "SETNX", "GETSET", "GETDEL", "GETEX", "APPEND", "INCR", "INCRBY"], 1),
    **dict.fromkeys(["INCRBYFLOAT", "DECR", "DECRBY", "EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT", "PERSIST"], 1),
    **dict.fromkeys(["DEL", "UNLINK"], "all"),
    **dict.fromkeys(["MSET", "MSETNX"], "pairs"),
}


def _command_name(args: Sequence[Any]) -> str:
    name = args[0]
    return (name.decode() if isinstance(name, bytes) else str(name)).upper()


def shadowed(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``args`` of a command as the floor sends it: a read as recorded (the same keys, so the same
    values come back); a write with its keys under :data:`SHADOW_PREFIX`, so that the floor writes
    as many bytes as the page did without changing what the page reads next (a counter, a lock, a
    fragment the page filled)."""
    where = _WRITES.get(_command_name(args))
    if where is None:
        return args

    def shadow(key: Any) -> Any:
        return SHADOW_PREFIX.encode() + key if isinstance(key, bytes) else f"{SHADOW_PREFIX}{key}"

    if where == "all":
        return (args[0], *(shadow(key) for key in args[1:]))
    if where == "pairs":
        return (args[0], *(shadow(item) if index % 2 == 0 else item for index, item in enumerate(args[1:])))
    return (args[0], shadow(args[1]), *args[2:])


def replay_cache_call(cache: Any, call: CacheCall) -> Any:
    """Send ``call`` again with the redis-py client ``cache``, as the page sent it: one command, or
    one pipeline of them; its writes on keys of the floor's own (:func:`shadowed`). The answer is
    read as redis-py reads it (bytes), not unpickled: what a server with no framework pays."""
    if not call.pipeline:
        ((args, options),) = call.commands
        return cache.execute_command(*shadowed(args), **options)
    pipeline = cache.pipeline(transaction=call.transaction)
    for args, options in call.commands:
        pipeline.execute_command(*shadowed(args), **options)
    return pipeline.execute()


def shadow_keys_delete(cache: Any) -> int:
    """Delete the keys the floor's replayed writes left (:func:`shadowed`); how many there were."""
    keys = list(cache.scan_iter(match=f"{SHADOW_PREFIX}*", count=1000))
    return cache.delete(*keys) if keys else 0


@contextmanager
def timed() -> Iterator[list[float]]:
    """``with timed() as elapsed:`` then ``elapsed[0]`` holds the seconds the block took."""
    elapsed = [0.0]
    started = time.perf_counter()
    try:
        yield elapsed
    finally:
        elapsed[0] = time.perf_counter() - started
