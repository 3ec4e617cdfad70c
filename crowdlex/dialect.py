"""What differs between the databases the platform runs on, in one place.

PostgreSQL serves production; SQLite is the embedded default (``make run``, a fresh checkout). The
rest of the code asks ``dialect()`` and reads the same on both: each difference is a method (or,
where the two run different algorithms, a named fact) implemented by ``PostgreSQL`` and ``SQLite``
side by side below. ``tests/test_layers.py`` fails the suite when a module outside this one
branches on the database's vendor.

The differences, and who asks:

- ``typed``: a placeholder cast so that a prepared statement knows its parameter's type
  (``crowdlex.sql``, the refresh requests, the claim).
- ``execute``: a statement prepared once per connection and planned once (``crowdlex.sql``).
- ``row_lock``: the ``FOR UPDATE`` clauses (the claim, the submit, the refresh requests); SQLite
  has one writer and no row locks, so they are left out as the ORM's ``select_for_update`` does.
- ``locked_elsewhere``: whether another transaction holds a row's lock now (the refresh).
- ``advisory_lock`` / ``advisory_lock_try`` / ``advisory_lock_shared_gate``: locks on a number
  pair held until the transaction ends (the refresh requests, the bot signals); SQLite's single
  writer gives the same order without them.
- ``session_hold`` / ``session_let_go`` / ``holds_end_with_connection``: a hold that outlives
  transactions (a batch's publish or sync); elsewhere the caller's lease stands in for it.
- ``bulk_copy``: rows written with COPY and ids reserved from the table's sequence
  (``copy_rows``, ``copy_lines``, ``reserve_ids``, ``copy_out_csv``: imports, HIT generation,
  the analysis's reads); elsewhere the ORM's bulk inserts and row streams.
- ``chains_writes``: several writes chained in one statement (data-modifying ``WITH``) and a
  counter drawn from a sequence (the claim, a submit's refresh request, a benchmark's change key).
- ``ordered_aggregates``: ``percentile_cont`` and ``array_agg ... ORDER BY`` (a batch's median
  time, the SWORDS export); elsewhere computed in Python.
- ``counter_with_transaction`` / ``transaction_in_progress``: the current transaction's id, which
  tells a count table written inside a refresh from one that rolled back (SWORDS's priors).
- ``planner_statistics_refresh``, ``scans_without_jit``: tuning of PostgreSQL's planner.
- ``transaction_read_only``: the transaction just begun refuses writes (the figures' warm);
  SQLite has no such mode, and its warm reads the same.
- ``HoursBetween``: whole hours between two times (a batch's throughput).
- ``connection_lost``: whether an error says the server is gone (``crowdlex.reconnect``).
- ``keeps_cursors``: whether one cursor may serve a connection's statements one after another
  (``crowdlex.sql.kept_cursor``).
- ``JsonListHolds``: whether a JSON list column holds a string (the data browser's candidates by
  source); Django's ``contains`` on a JSON field has no SQLite form.
- ``production``: whether this is production's database. The suite runs there; what a test pins
  of how that database runs the statements (their counts, its planner's statistics and plans, its
  catalog, the deferred keys that only it declares) holds there alone, and such a test is marked
  ``production_database`` (``tests/conftest.py``) and skipped on the embedded default.
"""

from __future__ import annotations

import hashlib
import io
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import IO, Any

from django.apps import apps
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, Error, connection, connections, models, transaction
from django.db.backends.utils import CursorWrapper
from django.db.models import Aggregate, BooleanField, F, FloatField, Func, IntegerField, JSONField, QuerySet, Value

from crowdlex.bulk import CsvRows, column_name

# SQLSTATE classes of a connection the server ended: 08 (connection exception) and 57P (operator
# intervention: shutdown, crash, starting up, database dropped).
LOST_SQLSTATES = ("08", "57P")

# The names of the statements prepared on each open PostgreSQL connection (by the driver's
# connection: a new connection after a restart of the database has none).
_PREPARED: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
# Per statement run prepared (by its text, with ``%s`` placeholders, and its number of
# parameters): its name, its PREPARE and its EXECUTE, worked out once per process. The texts are
# the code's shapes of statements, a few dozen (``crowdlex.sql``), so this stays small.
_EXECUTES: dict[tuple[str, int], tuple[str, str, str]] = {}


def _prepared(sql: str, count: int) -> tuple[str, str, str]:
    """The name, PREPARE and EXECUTE (with a ``%s`` placeholder for each of ``count`` parameters) of ``sql``."""
    name = "crowdlex_" + hashlib.blake2b(sql.encode(), digest_size=10).hexdigest()
    pieces = sql.split("%s")
    numbered = "".join(f"{piece}${index}" for index, piece in enumerate(pieces[:-1], start=1)) + pieces[-1]
    run = f"EXECUTE {name} ({', '.join(['%s'] * count)})" if count else f"EXECUTE {name}"
    return name, f"PREPARE {name} AS {numbered}", run


class KeptCursor(CursorWrapper):
    """Django's cursor wrapper, kept open on its connection for the next statement: leaving a
    ``with`` block does not close it (``crowdlex.sql.kept_cursor``)."""

    def __exit__(self, *exc_info: object) -> None:
        return None


# The cursors on which ``_run`` may call the driver at once: Django's plain wrapper and the kept one.
_PLAIN_CURSORS = (CursorWrapper, KeptCursor)


def _run(cursor: Any, sql: str, params: Sequence[Any]) -> None:
    """``cursor.execute(sql, params)`` on Django's cursor, with Django's layers between this call and
    the driver's taken in one step when they would do nothing else: a plain cursor (not the one that
    logs statements, under DEBUG or in a test counting them) and no execute wrapper installed (a
    test's or a benchmark's recorder). The transaction is still checked for an earlier error and
    the driver's errors still become Django's, as in ``CursorWrapper._execute``."""
    database = cursor.db
    if type(cursor) not in _PLAIN_CURSORS or database.execute_wrappers or not apps.ready:
        cursor.execute(sql, params)
        return
    database.validate_no_broken_transaction()
    with database.wrap_database_errors:
        cursor.cursor.execute(sql, params)


class Dialect:
    """The interface; see the module's docstring. Instances are hashable (a cache key for
    statements built once per process and dialect)."""

    name = ""
    bulk_copy = False
    chains_writes = False
    ordered_aggregates = False
    holds_end_with_connection = False
    # Whether a cursor may stay open between statements (``crowdlex.sql.kept_cursor``): the driver reads
    # each result whole when it runs the statement, so an open cursor holds nothing on the server.
    keeps_cursors = False
    production = False

    def __repr__(self) -> str:
        return f"<dialect {self.name}>"

    def typed(self, sql_type: str) -> str:
        """A ``%s`` placeholder for a value of ``sql_type`` that the statement does not settle."""
        raise NotImplementedError

    def execute(self, cursor: Any, sql: str, params: Sequence[Any] = ()) -> None:
        """Run ``sql`` (``%s`` placeholders) on ``cursor``."""
        raise NotImplementedError

    def row_lock(self, *, of: str | None = None, skip_locked: bool = False, no_key: bool = False) -> str:
        """The clause (with its leading space) that locks the rows a SELECT reads."""
        raise NotImplementedError

    def locked_elsewhere(self, rows: QuerySet[Any]) -> bool:
        """Whether another transaction holds the lock of the rows ``rows`` selects (which exist)."""
        raise NotImplementedError

    def advisory_lock(self, space: int, key: int) -> None:
        """Take the exclusive lock on (space, key) until the transaction ends, waiting for it."""
        raise NotImplementedError

    def advisory_lock_try(self, space: int, key: int) -> bool:
        """Take the exclusive lock on (space, key) until the transaction ends if it is free."""
        raise NotImplementedError

    def advisory_lock_shared_gate(self) -> str:
        """A SELECT of one row that takes the shared lock on (``%s``, ``%s``) until the
        transaction ends: the source of chained writes that must hold it (``chains_writes``)."""
        raise NotImplementedError

    def session_hold(self, space: int, key: int, *, lease: Callable[[], bool]) -> bool:
        """Hold (space, key) beyond the transaction, until ``session_let_go``; False if another
        run holds it. ``lease``: the caller's own hold where the database has none."""
        raise NotImplementedError

    def session_let_go(self, space: int, key: int, *, lease_end: Callable[[], None]) -> None:
        raise NotImplementedError

    def copy_rows(
        self,
        model: type[models.Model],
        fields: Sequence[str],
        rows: Iterable[Sequence[Any]],
        *,
        not_null: Sequence[str] = (),
    ) -> None:
        """Write ``rows`` (values in the order of ``fields``) into ``model``'s table (``bulk_copy``)."""
        raise NotImplementedError(f"no bulk copy on {self.name}")

    def copy_lines(
        self, model: type[models.Model], fields: Sequence[str], lines: Sequence[str], *, not_null: Sequence[str] = ()
    ) -> None:
        """Write rows already spelled as COPY's CSV lines (``bulk_copy``)."""
        raise NotImplementedError(f"no bulk copy on {self.name}")

    def reserve_ids(self, model: type[models.Model], count: int) -> list[int]:
        """``count`` new primary keys of ``model``, increasing, for rows ``copy_rows`` writes (``bulk_copy``)."""
        raise NotImplementedError(f"no sequences to reserve ids from on {self.name}")

    def copy_out_csv(self, sql: str, params: Sequence[Any], file: IO[bytes]) -> None:
        """Write the rows of a query as CSV to ``file`` (``bulk_copy``)."""
        raise NotImplementedError(f"no bulk copy on {self.name}")

    def median(self, expression: Any) -> Aggregate:
        """The exact median of ``expression`` (``ordered_aggregates``)."""
        raise NotImplementedError(f"no ordered-set aggregates on {self.name}")

    def counter_with_transaction(self, sql: str, params: Sequence[Any]) -> tuple[int, int | None]:
        """The integer a scalar query ``sql`` selects (0 for none) and the current transaction's id
        when it has written anything (None when it has not, or when the database has no such id)."""
        raise NotImplementedError

    def transaction_in_progress(self, transaction_id: int) -> bool:
        raise NotImplementedError

    def planner_statistics_refresh(self, columns: Mapping[type[models.Model], Sequence[str]]) -> None:
        """Renew the planner's statistics of these columns after a bulk load."""
        raise NotImplementedError

    @contextmanager
    def scans_without_jit(self) -> Iterator[None]:
        """Run the block with the planner's just-in-time compiler off."""
        yield

    def transaction_read_only(self) -> None:
        """Make the transaction just begun (before its first statement) refuse writes, where the
        database can."""

    def json_lists_joined(self, first: str, then: str) -> str:
        """SQL of the JSON list ``first`` followed by the elements of the JSON list ``then`` (both SQL
        expressions)."""
        raise NotImplementedError

    def connection_lost(self, error: Error) -> bool:
        """Whether ``error`` says the connection to the server is gone rather than that a statement failed."""
        raise NotImplementedError


class PostgreSQL(Dialect):
    """Production's database."""

    name = "postgresql"
    bulk_copy = True
    chains_writes = True
    ordered_aggregates = True
    holds_end_with_connection = True
    # psycopg2's cursors (unnamed) fetch the whole result at once. SQLite's do not: a cursor left
    # inside a result keeps its statement, and the database's read lock, open.
    keeps_cursors = True
    production = True

    def typed(self, sql_type: str) -> str:
        # PostgreSQL infers the types of a prepared statement's parameters when it prepares it.
        return f"CAST(%s AS {sql_type})"

    def execute(self, cursor: Any, sql: str, params: Sequence[Any] = ()) -> None:
        """As a prepared statement of the connection, prepared on first use (unless
        ``DATABASE_PREPARED_STATEMENTS`` is off: behind PgBouncer in transaction mode)."""
        if not settings.DATABASE_PREPARED_STATEMENTS:
            cursor.execute(sql, params)
            return
        key = (sql, len(params))
        found = _EXECUTES.get(key)
        if found is None:
            found = _EXECUTES[key] = _prepared(sql, len(params))
        name, prepare, run = found
        prepared = _PREPARED.setdefault(cursor.db.connection, set())
        if name not in prepared:
            # On the driver's cursor: once per connection, so not among the statements a request
            # counts (tests/hits/test_cycle_queries.py pins those of every request); its errors
            # still become Django's (a connection lost here is one the caller may retry,
            # crowdlex.reconnect).
            with cursor.db.wrap_database_errors:
                cursor.cursor.execute(prepare)
            prepared.add(name)
        _run(cursor, run, params)

    def row_lock(self, *, of: str | None = None, skip_locked: bool = False, no_key: bool = False) -> str:
        return (
            " FOR"
            + (" NO KEY" if no_key else "")
            + " UPDATE"
            + (f" OF {of}" if of else "")
            + (" SKIP LOCKED" if skip_locked else "")
        )

    def locked_elsewhere(self, rows: QuerySet[Any]) -> bool:
        with transaction.atomic():
            free = rows.select_for_update(no_key=True, skip_locked=True)
            return not list(free.values_list("pk", flat=True)) and rows.exists()

    def advisory_lock(self, space: int, key: int) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [space, key])

    def advisory_lock_try(self, space: int, key: int) -> bool:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", [space, key])
            row = cursor.fetchone()
            return bool(row and row[0])

    def advisory_lock_shared_gate(self) -> str:
        return "SELECT pg_advisory_xact_lock_shared(CAST(%s AS integer), CAST(%s AS integer))"

    def session_hold(self, space: int, key: int, *, lease: Callable[[], bool]) -> bool:
        # A session lock ends with the run, or with the connection of a process that dies.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [space, key])
            return bool(cursor.fetchone()[0])

    def session_let_go(self, space: int, key: int, *, lease_end: Callable[[], None]) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [space, key])

    def copy_rows(
        self,
        model: type[models.Model],
        fields: Sequence[str],
        rows: Iterable[Sequence[Any]],
        *,
        not_null: Sequence[str] = (),
    ) -> None:
        """COPY in CSV: None becomes NULL; booleans (in the model's boolean columns) are written as
        ``true``/``false``; other values as ``str`` does. Written as COPY reads them, a few
        hundred at a time, so no copy of them all is held."""
        booleans = [
            index for index, name in enumerate(fields) if isinstance(model._meta.get_field(name), models.BooleanField)
        ]
        with connection.cursor() as cursor:
            cursor.cursor.copy_expert(_copy_in(model, fields, not_null), CsvRows(rows, booleans))

    def copy_lines(
        self, model: type[models.Model], fields: Sequence[str], lines: Sequence[str], *, not_null: Sequence[str] = ()
    ) -> None:
        if not lines:
            return
        with connection.cursor() as cursor:
            cursor.cursor.copy_expert(_copy_in(model, fields, not_null), io.StringIO("".join(lines)))

    def reserve_ids(self, model: type[models.Model], count: int) -> list[int]:
        """Taken outside any transaction's control, as every insert takes them: a rollback leaves
        a gap, never a key used twice."""
        if count <= 0:
            return []
        pk = model._meta.pk
        assert pk is not None and pk.column
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
                [model._meta.db_table, pk.column, count],
            )
            return sorted(row[0] for row in cursor.fetchall())

    def copy_out_csv(self, sql: str, params: Sequence[Any], file: IO[bytes]) -> None:
        with connection.cursor() as cursor:
            raw = cursor.cursor
            query = raw.mogrify(sql, params).decode()
            raw.copy_expert(f"COPY ({query}) TO STDOUT WITH (FORMAT csv)", file)

    def median(self, expression: Any) -> Aggregate:
        return _Median(expression)

    def counter_with_transaction(self, sql: str, params: Sequence[Any]) -> tuple[int, int | None]:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT ({sql}), txid_current_if_assigned()", params)
            value, txid = cursor.fetchone()
        return int(value or 0), None if txid is None else int(txid)

    def transaction_in_progress(self, transaction_id: int) -> bool:
        with connection.cursor() as cursor:
            cursor.execute("SELECT txid_status(%s)", [transaction_id])
            (status,) = cursor.fetchone()
        return bool(status == "in progress")

    def transaction_read_only(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION READ ONLY")

    def planner_statistics_refresh(self, columns: Mapping[type[models.Model], Sequence[str]]) -> None:
        tables = ", ".join(
            f"{connection.ops.quote_name(model._meta.db_table)} ({', '.join(column_name(model, n) for n in names)})"
            for model, names in columns.items()
        )
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {tables}")

    @contextmanager
    def scans_without_jit(self) -> Iterator[None]:
        with connection.cursor() as cursor:
            cursor.execute("SET jit = off")
        try:
            yield
        finally:
            try:
                with connection.cursor() as cursor:
                    cursor.execute("RESET jit")
            except DatabaseError:
                # Inside a transaction that failed: its rollback undoes the SET anyway.
                pass

    def json_lists_joined(self, first: str, then: str) -> str:
        return f"{first} || {then}"

    def connection_lost(self, error: Error) -> bool:
        """The server says why it ends a connection: class 08 or 57P; a connection the client
        finds gone (refused, closed under it) comes with no SQLSTATE at all."""
        code = getattr(error.__cause__, "pgcode", None)
        return code is None or code.startswith(LOST_SQLSTATES)


class SQLite(Dialect):
    """The embedded default: one writer at a time, no row locks, no server."""

    name = "sqlite"

    def typed(self, sql_type: str) -> str:
        # SQLite's casts follow its column affinities and would turn a date into a number.
        return "%s"

    def execute(self, cursor: Any, sql: str, params: Sequence[Any] = ()) -> None:
        cursor.execute(sql, params)

    def row_lock(self, *, of: str | None = None, skip_locked: bool = False, no_key: bool = False) -> str:
        return ""

    def locked_elsewhere(self, rows: QuerySet[Any]) -> bool:
        return False  # the single writer runs one at a time anyway

    def advisory_lock(self, space: int, key: int) -> None:
        return None  # the single writer gives the same order

    def advisory_lock_try(self, space: int, key: int) -> bool:
        return True

    def advisory_lock_shared_gate(self) -> str:
        raise NotImplementedError("SQLite chains no writes")

    def session_hold(self, space: int, key: int, *, lease: Callable[[], bool]) -> bool:
        return lease()

    def session_let_go(self, space: int, key: int, *, lease_end: Callable[[], None]) -> None:
        lease_end()

    def counter_with_transaction(self, sql: str, params: Sequence[Any]) -> tuple[int, int | None]:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT ({sql})", params)
            (value,) = cursor.fetchone()
        return int(value or 0), None

    def transaction_in_progress(self, transaction_id: int) -> bool:
        return False

    def planner_statistics_refresh(self, columns: Mapping[type[models.Model], Sequence[str]]) -> None:
        return None

    def json_lists_joined(self, first: str, then: str) -> str:
        return (
            f"(SELECT json_group_array(value) FROM (SELECT value FROM json_each({first}) "
            f"UNION ALL SELECT value FROM json_each({then})))"
        )

    def connection_lost(self, error: Error) -> bool:
        return False  # no server to lose; its OperationalError is a locked file


POSTGRESQL = PostgreSQL()
SQLITE = SQLite()
# By Django's vendor of a connection; a test may put another dialect under a vendor.
BY_VENDOR: dict[str, Dialect] = {POSTGRESQL.name: POSTGRESQL, SQLITE.name: SQLITE}


# The vendor of each database engine (a backend's module), as its connections name it: read through
# the configured settings of an alias, not its connection, which is looked up in the thread's (or
# task's) storage each time, a few times a request (docs/benchmarks.md, "The API's cycle in one
# process").
_ENGINE_VENDORS: dict[str | None, str] = {}


def dialect(alias: str = DEFAULT_DB_ALIAS) -> Dialect:
    """The dialect of the connection ``alias``."""
    engine = connections.settings.get(alias, {}).get("ENGINE")
    vendor = _ENGINE_VENDORS.get(engine)
    if vendor is None:
        # An alias not configured raises here, as Django raises it.
        vendor = connections[alias].vendor
        _ENGINE_VENDORS[engine] = vendor
    return BY_VENDOR[vendor]


def dialect_of(database: Any) -> Dialect:
    """The dialect of a connection (a cursor's ``db``)."""
    return BY_VENDOR[database.vendor]


def _copy_in(model: type[models.Model], fields: Sequence[str], not_null: Sequence[str]) -> str:
    table = connection.ops.quote_name(model._meta.db_table)
    columns = ", ".join(column_name(model, name) for name in fields)
    options = "FORMAT csv"
    if not_null:
        # COPY's CSV reads an empty cell as NULL: text columns that hold empty strings say not to.
        options += f", FORCE_NOT_NULL ({', '.join(column_name(model, name) for name in not_null)})"
    return f"COPY {table} ({columns}) FROM STDIN WITH ({options})"


class _Median(Aggregate):
    function = "percentile_cont"
    template = "%(function)s(0.5) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()


class JsonListHolds(Func):
    """Whether the JSON list in a field holds ``value`` (a string), as a condition of ``filter``."""

    template = "(%(expressions)s)"
    arg_joiner = " @> "
    output_field = BooleanField()

    def __init__(self, field: str, value: str) -> None:
        super().__init__(F(field), Value([value], output_field=JSONField()))
        self.value = value

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        column, params = compiler.compile(self.source_expressions[0])
        return f"EXISTS (SELECT 1 FROM json_each({column}) WHERE json_each.value = %s)", (*params, self.value)


class HoursBetween(Func):
    """Whole hours from the second expression to the first (a submission's age at ``now``)."""

    template = "FLOOR(EXTRACT(EPOCH FROM (%(expressions)s)) / 3600)"
    arg_joiner = " - "
    output_field = IntegerField()

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(
            compiler,
            connection,
            template="CAST((julianday(%(expressions)s)) * 24 AS INTEGER)",
            arg_joiner=") - julianday(",
            **extra,
        )
