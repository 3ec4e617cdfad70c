"""Rows in SQL for the statements the annotator's cycle runs on every request.

The ORM spends more CPU building a statement than PostgreSQL spends running it: on the claim and
submit of the annotator's cycle, building them took about half of the request's time
(docs/benchmarks.md). These helpers keep hand-written statements short and still give Django's
model instances and values: ``select_columns`` / ``instances`` read the rows of several joined
models into instances, with the database's values converted as the ORM converts them (SQLite too);
``insert_rows`` inserts rows given as field values, with the other fields' defaults; ``update_row``
writes some fields of one instance. Statements are built once per process and shape.

PostgreSQL spends more time planning these statements than running them (the claim's: 3.3 ms
to plan, 0.1 ms to run). ``execute`` runs them as prepared statements of the connection: each is
prepared the first time a connection runs it and planned once, not on every request.
``DATABASE_PREPARED_STATEMENTS`` turns that off (behind PgBouncer in transaction mode, where a
prepared statement would not follow the session from one server connection to the next).
"""

from __future__ import annotations

import asyncio
import functools
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections, models
from django.db.models import Field, Model
from django.db.models.base import ModelState
from django.db.models.fields.related_descriptors import ForeignKeyDeferredAttribute
from django.db.models.query_utils import DeferredAttribute
from django.db.models.signals import post_init, pre_init
from django.utils import timezone

from crowdlex.dialect import Dialect, KeptCursor, dialect_of

# The cursor kept on each connection (by the driver's connection: a new connection after a restart of
# the database gets its own), for ``kept_cursor``.
_KEPT: weakref.WeakKeyDictionary[Any, KeptCursor] = weakref.WeakKeyDictionary()


def kept_cursor(alias: str = DEFAULT_DB_ALIAS) -> Any:
    """``connections[alias].cursor()``, to use in a ``with`` block as Django's, for the statements of
    the annotator's cycle: where the dialect allows it (``keeps_cursors``), one cursor kept open on
    the connection and handed out again, as leaving the block does not close it. Making a cursor
    per statement (the driver's, Django's wrapper, the connection's checks) took a tenth of a
    millisecond of each cycle of twelve (docs/benchmarks.md, "The API's cycle in one process").

    What Django's ``cursor()`` checks still holds: the connection's health check on its first use
    in a request, its thread, no use from an event loop's thread. A connection not open yet, one
    whose statements are logged (``DEBUG``, a test counting them) or an event loop running get
    Django's own cursor."""
    database = connections[alias]
    database.close_if_health_check_failed()
    raw = database.connection
    if raw is None or not dialect_of(database).keeps_cursors or database.queries_logged or _in_event_loop():
        return database.cursor()
    database.validate_thread_sharing()
    kept = _KEPT.get(raw)
    if kept is None or kept.cursor.closed:
        with database.wrap_database_errors:
            kept = _KEPT[raw] = KeptCursor(database.create_cursor(), database)
    return kept


def _in_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def execute(cursor: Any, sql: str, params: Sequence[Any] = ()) -> None:
    """Run ``sql`` (``%s`` placeholders) on ``cursor``: on PostgreSQL as a prepared statement of the
    connection, prepared on first use (``crowdlex.dialect``). A parameter whose type the statement
    does not settle needs a cast in ``sql`` (``typed``), as PostgreSQL infers the types when preparing."""
    dialect_of(cursor.db).execute(cursor, sql, params)


def typed(field: Field[Any, Any]) -> str:
    """A placeholder for a value of ``field`` whose type the statement does not settle: cast on
    PostgreSQL, which infers the types of a prepared statement's parameters; as is elsewhere
    (SQLite's casts follow its column affinities and would turn a date into a number)."""
    database = connections[DEFAULT_DB_ALIAS]
    return dialect_of(database).typed(str(field.cast_db_type(database)))


# A model and the alias its table has in the statement.
Part = tuple[type[Model], str]
Converter = Callable[[Any, Any, Any], Any]


def _fields(model: type[Model]) -> list[Field[Any, Any]]:
    return list(model._meta.concrete_fields)


def _column(field: Field[Any, Any]) -> str:
    return connection.ops.quote_name(field.column or field.attname)


@functools.cache
def _select_columns(parts: tuple[Part, ...]) -> str:
    return ", ".join(f"{alias}.{_column(field)}" for model, alias in parts for field in _fields(model))


def select_columns(*parts: Part) -> str:
    """The select list of every column of each model (under its alias), in the order ``instances`` reads."""
    return _select_columns(parts)


# The descriptors that ``Model.__init__`` sets a field's value through by putting it in the
# instance's ``__dict__``, and nothing else (a fresh instance has no related object to forget).
_PLAIN_DESCRIPTORS = (DeferredAttribute, ForeignKeyDeferredAttribute)


def _built_directly(model: type[Model]) -> bool:
    """Whether an instance of ``model`` read from a row is what ``Model.from_db`` would build when its
    values are put straight into the instance's ``__dict__``: no override of ``from_db`` or
    ``__init__``, and every field set through a plain descriptor. The init signals are checked at
    each call, as receivers may connect at any time."""
    if model.from_db.__func__ is not Model.from_db.__func__ or model.__init__ is not Model.__init__:  # type: ignore[attr-defined]
        return False
    return all(type(model.__dict__.get(field.attname)) in _PLAIN_DESCRIPTORS for field in _fields(model))


@functools.cache
def _plan(parts: tuple[Part, ...], sql_dialect: Dialect) -> tuple[tuple[Any, ...], ...]:
    """Per model of ``parts``: the model, its field names, the index of its primary key, each column's
    converters (the functions that turn its database value into the field's, with the column they
    take) and whether it may be built without ``Model.__init__`` (``_built_directly``)."""
    plan = []
    for model, alias in parts:
        fields = _fields(model)
        converters = []
        for field in fields:
            column = field.get_col(alias)
            functions = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
            converters.append((column, tuple(functions)))
        attnames = tuple(field.attname for field in fields)
        pk_index = fields.index(model._meta.pk)  # type: ignore[arg-type]
        plan.append((model, attnames, pk_index, tuple(converters), _built_directly(model)))
    return tuple(plan)


def instances(row: Sequence[Any], *parts: Part) -> list[Any]:
    """The instances of ``parts`` in one row selected by ``select_columns(*parts)``; None for a model
    whose primary key is NULL (the missing side of a left join).

    An instance is what ``Model.from_db`` builds; for a model without init signals or overrides
    (``_built_directly``) its values go straight into the instance, without ``Model.__init__``:
    on every request of the annotator's cycle that step took a tenth of the request's CPU
    (docs/benchmarks.md, "The API's request path")."""
    database = connections[DEFAULT_DB_ALIAS]
    found: list[Any] = []
    start = 0
    for model, attnames, pk_index, converters, direct in _plan(parts, dialect_of(database)):
        end = start + len(attnames)
        values = list(row[start:end])
        start = end
        if values[pk_index] is None:
            found.append(None)
            continue
        for index, (column, functions) in enumerate(converters):
            if functions:
                value = values[index]
                if value is not None:
                    for function in functions:
                        value = function(value, column, database)
                    values[index] = value
        found.append(_from_db(model, attnames, values, direct))
    return found


def _from_db(model: type[Model], attnames: Sequence[str], values: Sequence[Any], direct: bool) -> Any:
    """``model.from_db`` of these fields' values; straight into the instance when ``direct``
    (``_built_directly``) and no init signal has a receiver for the model."""
    if direct and not (pre_init.has_listeners(model) or post_init.has_listeners(model)):
        instance = model.__new__(model)
        state = instance._state = ModelState()
        state.adding = False
        state.db = DEFAULT_DB_ALIAS
        instance.__dict__.update(zip(attnames, values, strict=True))
        return instance
    return model.from_db(DEFAULT_DB_ALIAS, attnames, values)


_built_directly_kept = functools.cache(_built_directly)


def instance_of(model: type[Model], **values: Any) -> Any:
    """What ``model.from_db`` gives for a row of these fields alone (by ``attname``, in the model's
    order of fields), the others deferred: an instance that stands for a row known by a few of its values (an id, an API
    token's key and account). Built straight into the instance as ``instances`` builds one:
    ``Model.__init__`` with every other field deferred took a few hundredths of a millisecond,
    several times a cycle (docs/benchmarks.md, "The API's cycle in one process")."""
    return _from_db(model, tuple(values), tuple(values.values()), _built_directly_kept(model))


# Values a database driver takes as they are: the ORM's preparation returns them unchanged for the
# fields of ``_PLAIN``, so ``insert_rows`` skips it for them.
_AS_IS = (int, str, float, bool, type(None))
_PLAIN = (
    models.IntegerField,
    models.CharField,
    models.TextField,
    models.BooleanField,
    models.FloatField,
    models.ForeignKey,
)
# Inserts of up to this many rows run prepared (``execute``): the cycle's answers and labels, a few
# statements per connection (one per count of rows). Larger ones, rarer and of any count, do not.
_PREPARED_ROWS = 64


# How ``insert_rows`` takes a given field's value: as it is when of a type in ``_AS_IS`` (a field of
# ``_PLAIN``), or any ``str`` for Django's own text fields, whose preparation returns a string (an
# enumeration's member too) unchanged; otherwise prepared by the field.
_GIVEN_PLAIN, _GIVEN_TEXT, _GIVEN_PREPARED = 0, 1, 2
_TEXT_FIELDS = (models.CharField, models.TextField)


@functools.cache
def _insert_plan(model: type[Model], given: frozenset[str], sql_dialect: Dialect) -> tuple[Any, ...]:
    """What ``insert_rows`` needs for rows of ``model`` giving the fields ``given``, worked out once
    per process: the statement's head and a row's placeholders; a row's values with each constant
    default prepared in its place; the given fields (their places, names, fields and how each value
    is taken); the places of the ``auto_now`` fields, which take the time, and the first of those
    fields; the fields whose default is a function called per row, with their places."""
    database = connections[DEFAULT_DB_ALIAS]
    fields = [field for field in _fields(model) if not field.primary_key]
    template: list[Any] = [None] * len(fields)
    given_steps, now_places, default_steps = [], [], []
    now_field = None
    for place, field in enumerate(fields):
        if field.attname in given:
            if type(field) in _TEXT_FIELDS:
                how = _GIVEN_TEXT
            else:
                how = _GIVEN_PLAIN if isinstance(field, _PLAIN) else _GIVEN_PREPARED
            given_steps.append((place, field.attname, field, how))
        elif getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            now_places.append(place)
            now_field = now_field or field
        elif not field.has_default() or not callable(field.default):
            template[place] = field.get_db_prep_save(field.get_default(), database)
        else:
            default_steps.append((place, field))
    table = connection.ops.quote_name(model._meta.db_table)
    head = f"INSERT INTO {table} ({', '.join(map(_column, fields))}) VALUES "
    placeholders = "(" + ", ".join(["%s"] * len(fields)) + ")"
    return head, placeholders, tuple(template), tuple(given_steps), tuple(now_places), now_field, tuple(default_steps)


def insert_rows(model: type[Model], rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert one row per mapping of field names (``attname``: ``hit_id``, not ``hit``) to values, in
    one statement; fields not given take their defaults (``auto_now`` ones the time), as the ORM
    would give them. Every row gives the same fields. No signals are sent, as with ``bulk_create``.
    On PostgreSQL a statement of a few rows runs prepared (``execute``)."""
    if not rows:
        return
    # The connection itself, not the proxy: preparing a value reads it several times.
    database = connections[DEFAULT_DB_ALIAS]
    plan = _insert_plan(model, frozenset(rows[0]), dialect_of(database))
    head, placeholders, template, given_steps, now_places, now_field, default_steps = plan
    # Each row starts from the constant defaults and the time (one for all the rows).
    start = list(template)
    if now_field is not None:
        now = now_field.get_db_prep_save(timezone.now(), database)
        for place in now_places:
            start[place] = now
    params: list[Any] = []
    for row in rows:
        values = start.copy()
        for place, attname, field, how in given_steps:
            value = row[attname]
            as_is = type(value) in _AS_IS and how != _GIVEN_PREPARED
            if not as_is and not (how == _GIVEN_TEXT and isinstance(value, str)):
                value = field.get_db_prep_save(value, database)
            values[place] = value
        for place, field in default_steps:
            values[place] = field.get_db_prep_save(field.get_default(), database)
        params += values
    statement = head + ", ".join([placeholders] * len(rows))
    with kept_cursor() as kept:
        if len(rows) <= _PREPARED_ROWS:
            execute(kept, statement, params)
        else:
            kept.execute(statement, params)


@functools.cache
def _update_statement(model: type[Model], fields: tuple[str, ...], sql_dialect: Dialect) -> tuple[str, list[Any]]:
    meta = model._meta
    chosen: list[Any] = [meta.get_field(name) for name in fields]
    assignments = ", ".join(f"{_column(field)} = {typed(field)}" for field in chosen)
    table, key = connection.ops.quote_name(meta.db_table), _column(meta.pk)  # type: ignore[arg-type]
    return f"UPDATE {table} SET {assignments} WHERE {key} = %s", chosen


def update_row(instance: Model, fields: Sequence[str]) -> None:
    """Write these fields of ``instance`` (by ``attname``) to its row: ``save(update_fields=...)``
    without the ORM's statement building and without signals."""
    database = connections[DEFAULT_DB_ALIAS]
    statement, chosen = _update_statement(type(instance), tuple(fields), dialect_of(database))
    params = [field.get_db_prep_save(getattr(instance, field.attname), database) for field in chosen]
    with kept_cursor() as kept:
        execute(kept, statement, [*params, instance.pk])
