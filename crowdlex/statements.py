"""Statements the ORM builds once per process: the figures' reads after a change (docs/design.md §7,
"Incremental figures").

The first request after a submit brings the kept figures up to date for the targets the submit
touched with a few dozen small grouped statements. Building each with the ORM (its filters,
joins, annotations and compilation) cost several times what PostgreSQL spent running it, and most
of that request's CPU (docs/benchmarks.md, "The first request after a submit, fifth round").
``shaped_rows`` asks the ORM for a statement's text once per process and shape, with marked values
in place of its arguments, finds where each marked value went among the statement's parameters,
and afterwards runs that text with the arguments put in their places: the ORM's own statement, on
either database, without building it again. The rows are the ORM's (its converters applied: a
boolean comes back a boolean on SQLite too).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import chain
from typing import Any, TypeVar

from django.core.exceptions import EmptyResultSet
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model, QuerySet
from django.db.models.query import ModelIterable, ValuesListIterable, get_related_populators

from crowdlex.dialect import dialect
from crowdlex.sql import kept_cursor

M = TypeVar("M", bound=Model)


class Searched(str):
    """A text argument that is a parameter of the statement (a search's words, compared whole or
    contained), not part of its shape as a plain text is: one statement for every text."""


# An argument: a number, a moment, a searched text, or a list of numbers (ids; the statement is
# built per length).
Argument = int | datetime | Iterable[int] | bool | str | None

# The statement is built twice, each time with its own marked stand-ins for the arguments: numbers
# that any integer column's range holds (Django finds a number outside a column's range matches
# nothing and builds no statement), and moments. A parameter is an argument's where both builds put
# that argument's stand-ins; elsewhere it is a constant of the statement, the same in both.
_MARKS = (1_000, 17_000)
_MOST_MARKS = 15_000
_MARK_MOMENTS = (datetime(1901, 2, 3, 4, 5, 6, tzinfo=UTC), datetime(1902, 3, 4, 5, 6, 7, tzinfo=UTC))
# A searched text's stand-in: its underscores are escaped where the ORM matches it as part of a
# pattern (``contains``), so where it went says how the argument is put there.
_MARK_TEXT = "crowdlex_searched_{build}_{count}_"


@dataclass(frozen=True)
class _Slot:
    """Where a parameter comes from: argument ``argument`` (its item ``item`` for a list), converted
    as the ORM converted the marked value (``adapt``), or a constant of the statement."""

    argument: int = -1
    item: int = -1
    adapt: Callable[[Any], Any] | None = None
    constant: Any = None


@dataclass(frozen=True)
class _Pattern:
    """How a searched text is put in a parameter: between ``before`` and ``after``, escaped as the
    ORM escapes a part of a pattern (``escape``) or as it is."""

    before: str
    after: str
    escape: Callable[[str], str] | None

    def __call__(self, value: str) -> str:
        return f"{self.before}{self.escape(value) if self.escape else value}{self.after}"


def _searched_slot(
    param: str, other: str, where: dict[Any, Any], other_where: dict[Any, Any], ops: Any
) -> _Slot | None:
    """The slot of a text parameter that holds a searched text's stand-in in both builds, at the same
    place between the same texts; None for a text that holds none."""
    for mark, (argument, _) in where.items():
        if not isinstance(mark, Searched):
            continue
        other_mark = next(found for found, at in other_where.items() if at == (argument, -1))
        for escape in (None, ops.prep_for_like_query):
            form, other_form = (escape(mark), escape(other_mark)) if escape else (mark, other_mark)
            at = param.find(form)
            if at < 0 or param.count(form) != 1:
                continue
            before, after = param[:at], param[at + len(form) :]
            if other == f"{before}{other_form}{after}":
                return _Slot(argument, adapt=_Pattern(before, after, escape))
    return None


@dataclass(frozen=True)
class _Objects:
    """How a row becomes a model instance, as ``ModelIterable`` makes it: the model, its fields'
    names, where its columns are, the related objects selected with it, and the annotations."""

    model: Any
    names: tuple[str, ...]
    start: int
    end: int
    populators: tuple[Any, ...]
    annotations: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class _Shaped:
    sql: str
    slots: tuple[_Slot, ...]
    compiler: Any
    converters: dict[int, Any]
    width: int | None
    objects: _Objects | None = None


def _marks(arguments: Sequence[Argument], build: int) -> tuple[list[Any], dict[Any, tuple[int, int]]]:
    """The stand-ins of ``arguments`` for the build ``build`` (0 or 1) and, by stand-in, the
    (argument, item) it stands for."""
    marked: list[Any] = []
    where: dict[Any, tuple[int, int]] = {}
    count = 0
    for index, argument in enumerate(arguments):
        value: Any
        if isinstance(argument, Searched):
            value = Searched(_MARK_TEXT.format(build=build, count=count))
            where[value] = (index, -1)
        elif argument is None or isinstance(argument, bool | str):
            value = argument
        elif isinstance(argument, datetime):
            value = _MARK_MOMENTS[build] + timedelta(microseconds=count)
            where[value] = (index, -1)
        elif isinstance(argument, int):
            value = _MARKS[build] + count
            where[value] = (index, -1)
        else:
            value = []
            for item in range(len(list(argument))):
                value.append(_MARKS[build] + count)
                where[_MARKS[build] + count] = (index, item)
                count += 1
        count += 1
        marked.append(value)
    return marked, where


def _padded(argument: Argument) -> Argument:
    if argument is None or isinstance(argument, bool | int | datetime | str):
        return argument
    items = list(argument)
    if not items:
        return items
    size = 1 << (len(items) - 1).bit_length()
    return items + [items[-1]] * (size - len(items))


def _named(build: Callable[..., QuerySet[Any]]) -> str:
    """What an error calls ``build``: its function's name, or its class's for a callable object."""
    return getattr(build, "__qualname__", type(build).__qualname__)


def _shape(build: Callable[..., QuerySet[Any]], arguments: Sequence[Argument], using: str) -> _Shaped:
    database = connections[using]
    moment = database.ops.adapt_datetimefield_value
    built = []
    for each in (0, 1):
        marked, where = _marks(arguments, each)
        queryset = build(*marked)
        compiler = queryset.query.get_compiler(using)
        sql, params = compiler.as_sql()
        # A moment's stand-in as the ORM passes it (on SQLite, as text).
        adapted: dict[Any, Any] = {moment(mark): mark for mark in where if isinstance(mark, datetime)}
        built.append((sql, params, where, adapted, compiler))
    (sql, params, where, adapted, compiler), (other_sql, other_params, other_where, other_adapted, _) = built
    if sql != other_sql or len(params) != len(other_params):
        raise ValueError(f"{_named(build)}: its statement's text depends on its arguments' values")
    slots = []
    found = set()
    for param, other in zip(params, other_params, strict=True):
        slot = _Slot(constant=param)
        # A stand-in is a number or a moment (or its text); a list is a constant (a JSON path).
        if isinstance(param, int | datetime | str) and not isinstance(param, bool):
            if param in where and other in other_where and where[param] == other_where[other]:
                slot = _Slot(*where[param])
            elif param in adapted and other in other_adapted:
                # A moment the database takes as text (SQLite) is found before a searched text.
                first, second = where[adapted[param]], other_where[other_adapted[other]]
                if first == second:
                    slot = _Slot(*first, adapt=moment)
            elif isinstance(param, str) and isinstance(other, str):
                slot = _searched_slot(param, other, where, other_where, database.ops) or slot
        if slot.argument < 0 and param != other:
            raise ValueError(f"{_named(build)}: a parameter of its statement is not one of its arguments")
        if slot.argument >= 0:
            found.add((slot.argument, slot.item))
        slots.append(slot)
    # Every argument is a parameter of the statement.
    if found != set(where.values()):
        raise ValueError(f"{_named(build)}: arguments not passed as parameters")
    fields = [column[0] for column in compiler.select[0 : compiler.col_count]]
    converters = compiler.get_converters(fields)
    objects = None
    if issubclass(queryset._iterable_class, ModelIterable):
        if getattr(queryset, "_known_related_objects", None) or getattr(queryset, "_prefetch_related_lookups", ()):
            raise ValueError(f"{_named(build)}: related objects known or prefetched are not built here")
        info, select = compiler.klass_info, compiler.select
        start, end = info["select_fields"][0], info["select_fields"][-1] + 1
        objects = _Objects(
            model=info["model"],
            names=tuple(column[0].target.attname for column in select[start:end]),
            start=start,
            end=end,
            populators=tuple(get_related_populators(info, select, using)),  # type: ignore[call-arg]
            annotations=tuple(compiler.annotation_col_map.items()),
        )
    elif not issubclass(queryset._iterable_class, ValuesListIterable):
        raise ValueError(f"{_named(build)}: a queryset of instances or of values_list rows is built here")
    width = compiler.col_count if compiler.has_extra_select else None
    return _Shaped(sql, tuple(slots), compiler, converters, width, objects)


# What a shape that selects nothing whatever its arguments is kept as.
_NOTHING = _Shaped("", (), None, {}, None)
# The statements built, by function, shape of the arguments, database and key.
_SHAPES: dict[tuple[Any, ...], _Shaped] = {}


def shaped_rows(
    build: Callable[..., QuerySet[Any]], *arguments: Argument, key: Hashable = None, using: str = DEFAULT_DB_ALIAS
) -> list[tuple[Any, ...]]:
    """The rows of ``build(*arguments)``, a ``values_list`` queryset, as tuples. ``build`` is a
    function of its arguments alone, the same for every call (a module's function, not a closure
    over other values, or a callable equal to another only where it builds the same statements),
    its arguments numbers, moments and lists of numbers that it reads with
    ``__in`` alone (a list's order and repeats change nothing); ``key`` names anything
    else the statement depends on (a setting). Its text is built by the ORM once per process, database,
    ``key`` and length of each list, then run with the arguments in their places (an empty list
    that makes the statement select nothing: no statement, as the ORM runs none). An argument that is
    None, a boolean or a text is part of the shape (every target rather than some, say; a split's
    name: a statement a value, for a few values), not a parameter; a ``Searched`` text is a
    parameter, compared whole or as part of a pattern (``icontains``: escaped as the ORM escapes it)."""
    found = _shaped_statement(build, arguments, key, using)
    if found is None:
        return list(build(*arguments))  # more ids than stand-ins: built by the ORM, as before
    shaped, params = found
    if shaped is _NOTHING:
        return []
    with kept_cursor(using) as cursor:
        cursor.execute(shaped.sql, params)
        rows = cursor.fetchall()
    if shaped.width is not None:
        rows = [row[: shaped.width] for row in rows]
    if shaped.objects is not None:
        return _objects(shaped, rows, using)  # type: ignore[return-value]
    if shaped.converters:
        return [tuple(row) for row in shaped.compiler.apply_converters(chain(rows), shaped.converters)]
    return [tuple(row) for row in rows] if rows and not isinstance(rows[0], tuple) else rows


def shaped_rows_counted(
    build: Callable[..., QuerySet[Any]], *arguments: Argument, key: Hashable = None, using: str = DEFAULT_DB_ALIAS
) -> int:
    """How many rows ``build(*arguments)`` selects (at most its slice's end), as ``.count()`` counts
    a sliced queryset: one statement, ``shaped_rows``' statement counted in a subquery."""
    found = _shaped_statement(build, arguments, key, using)
    if found is None:
        return build(*arguments).count()
    shaped, params = found
    if shaped is _NOTHING:
        return 0
    with kept_cursor(using) as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM ({shaped.sql}) subquery", params)
        return int(cursor.fetchone()[0])


def _shaped_statement(
    build: Callable[..., QuerySet[Any]], arguments: Sequence[Argument], key: Hashable, using: str
) -> tuple[_Shaped, list[Any]] | None:
    """The statement of ``build`` for the shape of ``arguments`` (built the first time) and its
    parameters; None where it has more ids than stand-ins (the ORM's to build)."""
    # A list is padded with its last item to a power of two: a few shapes per statement, not one per
    # length (the lists are ids an ``__in`` reads, where a repeated id changes nothing).
    arguments = tuple(_padded(argument) for argument in arguments)
    shape = tuple(len(argument) if isinstance(argument, list) else argument for argument in arguments)
    # A number or a moment stands in the shape by its type alone: its value is a parameter.
    kinds = tuple(
        type(argument).__name__
        if isinstance(argument, int | datetime | Searched) and not isinstance(argument, bool)
        else each
        for argument, each in zip(arguments, shape, strict=True)
    )
    cache_key = (build, kinds, using, key, dialect(using))
    shaped = _SHAPES.get(cache_key)
    if shaped is None and sum(len(argument) for argument in arguments if isinstance(argument, list)) > _MOST_MARKS:
        return None
    if shaped is None:
        try:
            shaped = _SHAPES[cache_key] = _shape(build, arguments, using)
        except EmptyResultSet:
            # An empty list where the statement can select nothing: the ORM runs none either.
            shaped = _SHAPES[cache_key] = _NOTHING
    if shaped is _NOTHING:
        return shaped, []
    params = []
    for slot in shaped.slots:
        if slot.argument < 0:
            params.append(slot.constant)
            continue
        value: Any = arguments[slot.argument]
        if slot.item >= 0:
            value = value[slot.item]  # type: ignore[index]
        elif isinstance(value, Searched):
            value = str(value)
        params.append(slot.adapt(value) if slot.adapt is not None else value)
    return shaped, params


def shaped_objects(
    build: Callable[..., QuerySet[M]], *arguments: Argument, key: Hashable = None, using: str = DEFAULT_DB_ALIAS
) -> list[M]:
    """``shaped_rows`` of a queryset of model instances (its related objects selected with it, its
    annotations): the instances the ORM builds from the rows, by the statement it built once."""
    return shaped_rows(build, *arguments, key=key, using=using)  # type: ignore[arg-type,return-value]


def _objects(shaped: _Shaped, rows: Sequence[Any], using: str) -> list[Any]:
    """The rows as ``ModelIterable`` makes them instances."""
    objects = shaped.objects
    assert objects is not None
    if shaped.converters:
        rows = list(shaped.compiler.apply_converters(chain(rows), shaped.converters))
    found = []
    for row in rows:
        instance = objects.model.from_db(using, objects.names, row[objects.start : objects.end])
        for populator in objects.populators:
            populator.populate(row, instance)
        for name, position in objects.annotations:
            setattr(instance, name, row[position])
        found.append(instance)
    return found


def _rows_counted(label: str, path: str, value: int) -> QuerySet[Any, tuple[int]]:
    # Grouped by ``path``: one row, or none when no row matches.
    from django.apps import apps
    from django.db.models import Count

    rows = apps.get_model(label)._default_manager.filter(**{path: value})
    return rows.values(path).annotate(n=Count("pk")).values_list("n").order_by()


def shaped_count(model: type[Model], path: str, value: int) -> int:
    """How many rows of ``model`` have ``value`` at ``path`` (a benchmark's id, say), by a statement
    built once per process, model and path (``shaped_rows``)."""
    rows = shaped_rows(_rows_counted, model._meta.label, path, value)
    return int(rows[0][0]) if rows else 0
