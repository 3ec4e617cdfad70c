"""The data browser's machinery: what a table declares (columns, filters, rows), the view a request
asks for (filters, sort, position), keyset pages and the CSV of a view (docs/analysis.md, "The data
browser").

A page never counts rows to skip: it asks for the rows after (or before) the last row shown, by the
sort column and then the id, so the hundredth page costs what the first does. Every sort expression
is made non-null (``Coalesce``) so the comparison of a cursor with a row is plain ``>``/``<``.
"""

from __future__ import annotations

import base64
import binascii
import copy
import functools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from itertools import islice
from typing import Any, ClassVar, NamedTuple
from urllib.parse import urlencode

from django.conf import settings
from django.db.models import F, Q, QuerySet
from django.urls import reverse

from analysis.figures import SchemeFigures, scheme_figures
from annotation.models import Benchmark
from annotation.roles import is_researcher
from crowdlex.kept_pages import Resumable
from crowdlex.spreadsheet import spreadsheet_safe_chunks
from crowdlex.statements import Searched, shaped_rows, shaped_rows_counted
from schemes import get_scheme
from schemes.base import AnnotationScheme

# The query parameters of a view that are not filters.
SORT, DIRECTION, AFTER, BEFORE = "sort", "dir", "after", "before"
POSITION = (AFTER, BEFORE)
# A placeholder id in a reversed URL, replaced by each row's id (one reverse per link kind, not per row).
_ID_MARK = 987654321


class BrowserError(ValueError):
    """A view's query that cannot be read: the message names the parameter and what it takes."""


@dataclass(frozen=True)
class Column:
    """A column of a table: ``key`` names it in the query string (``sort=key``); ``sort`` is the
    expression the rows are ordered by (never null), None when the column is not sortable; ``kind``
    says how a sort value travels in a cursor (int, float, text, time)."""

    key: str
    title: str
    sort: Any = None
    kind: str = "int"
    numeric: bool = False


@dataclass(frozen=True)
class Filter:
    """A filter of a table: ``kind`` text (contains, case-blind), int (an id), choice (one of
    ``choices``: (value, label)) or date (YYYY-MM-DD)."""

    key: str
    label: str
    kind: str = "text"
    choices: tuple[tuple[str, str], ...] = ()
    # Applied after the others, on the rows they kept: a filter that reads every row it is given.
    last: bool = False
    # A text filter whose value is a parameter of the one statement that narrows by it (compared
    # whole or contained): its views are built once (``_view_shape``). False for one that reads rows
    # to narrow, or whose value the ORM adapts (a list in a JSON column).
    parameter: bool = True


class Cell(NamedTuple):
    """What one row shows in one column: its text, a link where it leads somewhere, and its value in
    the CSV (the text unless ``csv`` says otherwise). A tuple: a page makes hundreds."""

    text: str
    url: str = ""
    csv: str | None = None

    @property
    def value(self) -> str:
        return self.text if self.csv is None else self.csv


class Links:
    """URLs of rows by URL name and id, reversed once per name (a page of 50 rows makes hundreds of links)."""

    def __init__(self, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self.patterns: dict[str, str] = {}

    def __call__(self, name: str, pk: Any, query: str = "") -> str:
        if not self.enabled or pk is None:
            return ""
        pattern = self.patterns.get(name)
        if pattern is None:
            pattern = self.patterns[name] = reverse(name, args=[_ID_MARK])
        return pattern.replace(str(_ID_MARK), str(pk)) + (f"?{query}" if query else "")

    def table_url(self, benchmark: Benchmark, table: str) -> str:
        """The browser's ``table`` of the benchmark, unfiltered (reversed once per request)."""
        name = f"data-{table}"
        pattern = self.patterns.get(name)
        if pattern is None:
            pattern = self.patterns[name] = reverse(name, args=[benchmark.name])
        return pattern

    def table(self, benchmark: Benchmark, table: str, **filters: Any) -> str:
        """The browser's ``table`` of the benchmark filtered by ``filters`` (e.g. a candidate's labels)."""
        if not self.enabled:
            return ""
        pattern = self.table_url(benchmark, table)
        if len(filters) == 1:
            ((key, value),) = filters.items()
            if type(value) is int:
                # What ``urlencode`` writes for one whole number, without its checks (a link a row).
                return f"{pattern}?{key}={value}"
        return f"{pattern}?{urlencode(filters)}"


@dataclass
class Context:
    """What a table asks of the benchmark while it builds a page, read once per request."""

    benchmark: Benchmark
    # Who reads the table: the workers they may see follow hits.access.
    user: Any
    scheme: AnnotationScheme
    figures: SchemeFigures
    links: Links
    # What a table builds once per request and reads more than once (``kept``).
    built: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, benchmark: Benchmark, user: Any, *, links: bool = True) -> Context:
        return cls(benchmark, user, get_scheme(benchmark), scheme_figures(benchmark), Links(enabled=links))

    def kept(self, key: str, build: Callable[[], Any]) -> Any:
        """``build()``, called the first time ``key`` is asked for in this request only."""
        if key not in self.built:
            self.built[key] = build()
        return self.built[key]

    def value_name(self, value: str) -> str:
        """The scheme's name of a stored label value (ProLex's "1 acceptable" for accept)."""
        return str(self.figures.value_names.get(value, value))


@dataclass(frozen=True)
class CsvPlan:
    """How a table's CSV reads its rows: ``values`` (field names or expressions of the table's
    model) read by one statement, and ``rows``, which turns a batch of those tuples into the CSV's
    rows, a list per row with the value of each column's cell (``Cell.value``): text, or an int or
    None where the cell is a whole number or empty (the CSV writes them as ``str`` and as nothing).
    ``text``: the columns whose cells may hold any text, which are checked for formulas; the other
    columns hold numbers, times or words of the table's own."""

    values: Sequence[Any]
    rows: Callable[[list[tuple[Any, ...]]], list[list[Any]]]
    text: tuple[int, ...]


class Table:
    """A table of the browser. Subclasses declare ``name``, ``columns``, ``filters``, the benchmark's
    rows (``rows``), what each filter keeps (``narrow``) and the cells of a page of rows (``cells``:
    a fixed number of queries whatever the page holds)."""

    name: ClassVar[str]
    default_sort: ClassVar[str] = "id"
    default_descending: ClassVar[bool] = False
    # Count a view's rows in id order: for a table whose rows carry their benchmark, the planner
    # then reads one range of an index (benchmark, id) and stops at the cap, where with no order it
    # may scan the table from its start, through other benchmarks' rows (docs/design.md §7,
    # "Labels by benchmark", "Candidates by benchmark").
    count_in_id_order: ClassVar[bool] = False
    # The rows follow the reader (hits.access): the reader's id is a parameter of its views'
    # statements, a superuser's views one shape of their own.
    follows_reader: ClassVar[bool] = False

    def title(self, context: Context) -> str:
        raise NotImplementedError

    def note(self, context: Context) -> tuple[str, str]:
        """A sentence shown above the table and the URL it points to ("" for none)."""
        return "", ""

    def columns(self, context: Context) -> list[Column]:
        raise NotImplementedError

    def filters(self, context: Context) -> list[Filter]:
        raise NotImplementedError

    def rows(self, context: Context) -> QuerySet[Any]:
        raise NotImplementedError

    def narrow(self, context: Context, rows: QuerySet[Any], key: str, value: Any) -> QuerySet[Any]:
        raise NotImplementedError

    def cells(self, context: Context, objects: Sequence[Any]) -> list[list[Cell]]:
        raise NotImplementedError

    def by_ids(self, context: Context, ids: list[int]) -> list[Any]:
        """The rows of ``ids`` (ids of the table's rows), as ``rows`` reads them, in any order."""
        return list(self.rows(context).filter(pk__in=ids))

    def csv(self, context: Context) -> CsvPlan:
        """The CSV's reading of the table: the values ``cells`` shows in each column, read without
        building a model per row; its rows are the CSV values of ``cells`` byte for byte."""
        raise NotImplementedError


@dataclass
class View:
    """A table's view as a request asks for it: the filters (checked), the sort and the position."""

    filters: dict[str, Any]
    given: dict[str, str]
    sort: str
    descending: bool
    after: tuple[Any, int] | None = None
    before: tuple[Any, int] | None = None

    def query(self, **changes: str | None) -> str:
        """The view's query string (no position unless given in ``changes``); None drops a parameter."""
        params: dict[str, str | None] = {**self.given, SORT: self.sort, DIRECTION: "desc" if self.descending else "asc"}
        params.update(changes)
        return urlencode({key: value for key, value in params.items() if value not in (None, "")})

    @property
    def saved_query(self) -> str:
        """What a saved view keeps: the filters and the sort, never the position."""
        return self.query()


def _clean(filter: Filter, raw: str) -> Any:
    raw = raw.strip()
    if filter.kind == "int":
        if not raw.isdigit() or len(raw) > 12:
            raise BrowserError(f"{filter.label} ({filter.key}) takes an id, a whole number; got {raw[:40]!r}.")
        return int(raw)
    if filter.kind == "choice":
        known = [value for value, _ in filter.choices]
        if raw not in known:
            raise BrowserError(
                f"{filter.label} ({filter.key}) takes one of {', '.join(known) or 'nothing'}; got {raw[:40]!r}."
            )
        return raw
    if filter.kind == "date":
        try:
            return date.fromisoformat(raw)
        except ValueError:
            raise BrowserError(f"{filter.label} ({filter.key}) takes a date as YYYY-MM-DD; got {raw[:40]!r}.") from None
    if len(raw) > 200:
        raise BrowserError(f"{filter.label} ({filter.key}) takes at most 200 characters.")
    return raw


def _cursor_decode(raw: str, column: Column, name: str) -> tuple[Any, int]:
    try:
        value, pk = json.loads(base64.urlsafe_b64decode(raw.encode() + b"=" * (-len(raw) % 4)))
        if not isinstance(pk, int):
            raise ValueError
        if column.kind == "int" and not isinstance(value, int):
            raise ValueError
        if column.kind == "float":
            value = float(value)
        if column.kind == "text" and not isinstance(value, str):
            raise ValueError
        if column.kind == "time":
            value = datetime.fromisoformat(value)
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        raise BrowserError(
            f"The page position ({name}) is not one this table made: open the first page again."
        ) from None
    return value, pk


def _cursor_encode(value: Any, pk: int) -> str:
    if isinstance(value, datetime):
        value = value.isoformat()
    return base64.urlsafe_b64encode(json.dumps([value, pk]).encode()).decode().rstrip("=")


def view_read(table: Table, context: Context, params: Mapping[str, str]) -> View:
    """The view ``params`` (a request's GET) ask for, checked: ``BrowserError`` names what is wrong."""
    columns = {column.key: column for column in table.columns(context) if column.sort is not None}
    filters: dict[str, Any] = {}
    given: dict[str, str] = {}
    for found in table.filters(context):
        raw = params.get(found.key, "")
        if raw.strip():
            filters[found.key] = _clean(found, raw)
            given[found.key] = raw.strip()
    sort = params.get(SORT) or table.default_sort
    if sort not in columns:
        raise BrowserError(f"Sort (sort) takes one of {', '.join(columns)}; got {sort[:40]!r}.")
    direction = params.get(DIRECTION, "")
    if direction not in ("", "asc", "desc"):
        raise BrowserError(f"Direction (dir) takes asc or desc; got {direction[:10]!r}.")
    descending = direction == "desc" if direction else (sort == table.default_sort and table.default_descending)
    view = View(filters=filters, given=given, sort=sort, descending=descending)
    if params.get(AFTER):
        view.after = _cursor_decode(params[AFTER], columns[sort], AFTER)
    elif params.get(BEFORE):
        view.before = _cursor_decode(params[BEFORE], columns[sort], BEFORE)
    return view


def _day_start(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def date_range(field_name: str, key: str, value: date) -> Q:
    """Rows on or after the day (``key`` "from"), or on or before it ("to"), in UTC."""
    if key == "from":
        return Q(**{f"{field_name}__gte": _day_start(value)})
    return Q(**{f"{field_name}__lt": _day_start(value + timedelta(days=1))})


def filtered(table: Table, context: Context, view: View) -> QuerySet[Any]:
    """The table's rows that the view's filters keep, in no order."""
    rows = table.rows(context)
    last = {found.key for found in table.filters(context) if found.last}
    for key, value in sorted(view.filters.items(), key=lambda item: item[0] in last):
        rows = table.narrow(context, rows, key, value)
    return rows


def _ordered(rows: QuerySet[Any], column: Column, *, descending: bool) -> QuerySet[Any]:
    key = F("browser_sort")
    return rows.annotate(browser_sort=column.sort).order_by(
        key.desc() if descending else key.asc(), "-pk" if descending else "pk"
    )


def _beyond(position: tuple[Any, int], *, descending: bool) -> Q:
    value, pk = position
    if descending:
        return Q(browser_sort__lt=value) | Q(browser_sort=value, pk__lt=pk)
    return Q(browser_sort__gt=value) | Q(browser_sort=value, pk__gt=pk)


@dataclass
class Page:
    """One page of a view: its rows' cells and where the next and previous pages start."""

    columns: list[Column]
    rows: list[list[Cell]]
    count: int
    count_capped: bool
    next: str = ""
    previous: str = ""
    first: bool = True
    objects: list[Any] = field(default_factory=list)


def page_read(table: Table, context: Context, view: View, *, size: int | None = None) -> Page:
    """The page of the view: its rows (at most ``size``, DATA_BROWSER_PAGE_SIZE by default) after
    ``view.after`` or before ``view.before``, the rows the view holds counted up to
    DATA_BROWSER_COUNT_CAP, and the query strings of the next and previous pages ("" at either end)."""
    size = size or settings.DATA_BROWSER_PAGE_SIZE
    cap = settings.DATA_BROWSER_COUNT_CAP
    columns = table.columns(context)
    column = next(found for found in columns if found.key == view.sort)
    backwards = view.before is not None
    position = view.before if backwards else view.after
    shape = _view_shape(table, context, view, column, position, backwards=backwards, size=size, cap=cap)
    if shape is None:
        rows = filtered(table, context, view)
        count = _counted(table, rows, cap)
        keys = list(_keys(rows, column, position, descending=view.descending != backwards)[: size + 1])
    else:
        counted, ordered, arguments, beyond = shape
        statement = _ViewStatement(table, context)
        count = shaped_rows_counted(statement, counted, *arguments)
        keys = shaped_rows(statement, ordered, *arguments, *beyond)
    more = len(keys) > size
    keys = keys[:size]
    if backwards:
        keys.reverse()
    objects = _fetched(table, context, keys)
    has_next = True if backwards else more
    has_previous = more if backwards else view.after is not None
    page = Page(columns=columns, rows=table.cells(context, objects), count=min(count, cap), count_capped=count > cap)
    page.objects = objects
    page.first = not has_previous
    if keys and has_next:
        last = keys[-1]
        page.next = view.query(**{AFTER: _cursor_encode(last[1], last[0])})
    if keys and has_previous:
        head = keys[0]
        page.previous = view.query(**{BEFORE: _cursor_encode(head[1], head[0])})
    return page


def _keys(rows: QuerySet[Any], column: Column, position: tuple[Any, int] | None, *, descending: bool) -> QuerySet[Any]:
    """The (id, sort value) of the view's rows in its order, after ``position`` where given."""
    ordered = _ordered(rows, column, descending=descending)
    if position is not None:
        ordered = ordered.filter(_beyond(position, descending=descending))
    return ordered.values_list("pk", "browser_sort")


# A view's count and page of ids by statements built once per process and shape of view
# (``crowdlex.statements``, docs/design.md §7, "Statements built once"): its tables, filters of
# ids, choices and texts (a search's text is a parameter, ``Searched``), sorts by numbers, times
# and texts. A float's position, a filter whose narrowing reads rows or whose value the ORM adapts
# (``Filter.parameter``) and a search of digits alone (an id, for some tables) are the ORM's.
_SHAPED_FILTERS = ("int", "choice", "text")
_SHAPED_POSITIONS = ("int", "time", "text")
# Ids and positions within a 32-bit integer's range are parameters; a larger one is the ORM's (it
# finds a number outside a column's range matches nothing).
_INT_RANGE = range(-(2**31), 2**31)


def _view_shape(
    table: Table,
    context: Context,
    view: View,
    column: Column,
    position: tuple[Any, int] | None,
    *,
    backwards: bool,
    size: int,
    cap: int,
) -> tuple[str, str, list[Any], list[Any]] | None:
    """The view's shapes, texts naming everything its count's and its keys' statements depend on
    but their numbers and searched texts, and those: the benchmark's id, the reader's (for a table
    that follows the reader and a reader who is not a superuser), the filters' ids and texts, then
    the position's (the keys' alone); None for a view the ORM builds."""
    filters = {found.key: found for found in table.filters(context)}
    arguments: list[Any] = [context.benchmark.pk]
    reader = ""
    if table.follows_reader:
        user = context.user
        # A reader who sees no worker has an empty view, which the ORM builds without a statement.
        if not is_researcher(user) or user.pk not in _INT_RANGE:
            return None
        reader = "all" if user.is_superuser else "member"
        if reader == "member":
            arguments.append(user.pk)
    named: list[Any] = []
    for key, value in sorted(view.filters.items()):
        found = filters[key]
        if found.kind not in _SHAPED_FILTERS:
            return None
        if found.kind == "int":
            if value not in _INT_RANGE:
                return None
            arguments.append(value)
            named.append([key])
        elif found.kind == "text":
            if not found.parameter or value.isdigit():
                return None
            arguments.append(Searched(value))
            named.append([key])
        else:
            named.append([key, value])
    beyond: list[Any] = []
    if position is not None:
        value, pk = position
        if column.kind not in _SHAPED_POSITIONS or pk not in _INT_RANGE:
            return None
        if column.kind == "int" and (type(value) is not int or value not in _INT_RANGE):
            return None
        if column.kind == "time" and (not isinstance(value, datetime) or value.utcoffset() is None):
            return None
        if column.kind == "text":
            if not isinstance(value, str):
                return None
            value = Searched(value)
        beyond = [value, pk]
    scheme = type(context.scheme).__qualname__, bool(context.scheme.page.shows_context)
    counted = json.dumps(["count", table.name, scheme, reader, named, cap])
    ordered = json.dumps(
        ["keys", table.name, scheme, reader, named, view.sort, view.descending, backwards, bool(beyond), size]
    )
    return counted, ordered, arguments, beyond


@dataclass(frozen=True)
class _ViewStatement:
    """The builder of a table's view statements (``shaped_rows``' ``build``): the table, and the
    context of the page that asks first. It is part of the statement's key by its table alone: the
    shape (``_view_shape``) names everything else of the context the statement depends on (the
    scheme, whether its items show a context), and the rest are its arguments."""

    table: Table
    context: Context = field(compare=False)

    def __call__(self, spec: str, benchmark_id: int, *values: Any) -> QuerySet[Any]:
        """The statement ``spec`` names (``_view_shape``: a view's count or its page's keys) with
        ``values`` in place of its numbers."""
        table, context = self.table, self.context
        what, name, _, reader, named, *rest = json.loads(spec)
        assert name == table.name
        # The page's benchmark under the marked id: what the scheme reads of it (its settings, for
        # a column's title) is the same, its id a parameter. So is the reader's, who is not a
        # superuser (``_view_shape``): their roles, read with them, are the same.
        stand_in = copy.copy(context.benchmark)
        stand_in.pk = benchmark_id
        given = list(values)
        user = context.user
        if reader == "member":
            user = copy.copy(user)
            user.pk = given.pop(0)
        built = Context(stand_in, user, context.scheme, context.figures, context.links)
        filters = {each[0]: (each[1] if len(each) > 1 else given.pop(0)) for each in named}
        if what == "count":
            (cap,) = rest
            rows = filtered(table, built, View(filters=filters, given={}, sort=table.default_sort, descending=False))
            return rows.order_by(*(("pk",) if table.count_in_id_order else ())).values_list("pk")[: cap + 1]
        sort, descending, backwards, positioned, size = rest
        column = next(found for found in table.columns(built) if found.key == sort)
        position = (given[0], given[1]) if positioned else None
        rows = filtered(table, built, View(filters=filters, given={}, sort=sort, descending=descending))
        return _keys(rows, column, position, descending=descending != backwards)[: size + 1]


def _fetched(table: Table, context: Context, keys: Sequence[tuple[int, Any]]) -> list[Any]:
    """The rows of ``keys`` (id, sort value) in their order, with what their cells read joined.

    A page is found in two statements: the ids in the view's order, reading only the columns the
    filters and the sort need, then those rows in full. Sorting the full, joined rows of a whole
    table to keep fifty of them costs several times more.
    """
    found = {row.pk: row for row in table.by_ids(context, [pk for pk, _ in keys])} if keys else {}
    return [found[pk] for pk, _ in keys if pk in found]


def view_size(table: Table, context: Context, view: View, *, cap: int) -> int:
    """Rows the view holds, counted up to ``cap + 1`` (a CSV download refuses a view above its cap)."""
    return _counted(table, filtered(table, context, view), cap)


def _counted(table: Table, rows: QuerySet[Any], cap: int) -> int:
    """The rows counted up to ``cap + 1``."""
    return rows.order_by(*(("pk",) if table.count_in_id_order else ())).values("pk")[: cap + 1].count()


def csv_chunks(table: Table, context: Context, view: View) -> Resumable:
    """The view as CSV text, its header's line first, then a string per CSV_DOWNLOAD_BATCH_ROWS rows:
    every row of the view (not only a page), in its sort, with the values the pages' cells give it
    (``Cell.value``), no cell a spreadsheet formula.

    One statement reads the whole view in its order (``Table.csv``'s values of each row, no model
    built), through a server-side cursor on PostgreSQL that fetches a batch at a time; a batch is
    formatted and written together (``crowdlex.spreadsheet.spreadsheet_safe_chunks``). The
    statements do not grow with the view (docs/design.md §7, "Whole CSV downloads"). Each chunk
    carries the rows written so far: the chunks after it are made again by ``csv_rest``
    (``crowdlex.kept_pages.Resumable``)."""
    size = settings.CSV_DOWNLOAD_BATCH_ROWS
    columns = table.columns(context)
    batches, text = _csv_batches(table, context, view, columns, size=size)
    written = 0

    def chunks() -> Iterator[tuple[str, int]]:
        nonlocal written

        def counted() -> Iterator[list[list[Any]]]:
            nonlocal written
            for rows in batches:
                written += len(rows)
                yield rows

        for chunk in spreadsheet_safe_chunks([found.title for found in columns], counted(), text=text):
            yield chunk, written

    def rest(offset: int) -> Callable[[], Iterator[str]]:
        return functools.partial(
            csv_rest,
            table=table,
            benchmark_id=context.benchmark.pk,
            user_id=context.user.pk,
            links=context.links.enabled,
            view=view,
            size=size,
            offset=offset,
        )

    return Resumable(chunks(), rest)


def _csv_batches(
    table: Table, context: Context, view: View, columns: list[Column], *, size: int, offset: int = 0
) -> tuple[Iterator[list[list[Any]]], tuple[int, ...]]:
    """The view's CSV rows after its first ``offset``, ``size`` at a time, and the columns that hold text."""
    column = next(found for found in columns if found.key == view.sort)
    plan = table.csv(context)
    ordered = _ordered(filtered(table, context, view), column, descending=view.descending)
    names: list[str] = []
    expressions: dict[str, Any] = {}
    for index, value in enumerate(plan.values):
        if isinstance(value, str):
            names.append(value)
        else:
            names.append(f"csv_{index}")
            expressions[names[-1]] = value
    read = ordered.annotate(**expressions).values_list(*names)
    stream = (read[offset:] if offset else read).iterator(chunk_size=size)
    batches = (plan.rows(batch) for batch in iter(lambda: list(islice(stream, size)), []))
    return batches, plan.text


def csv_rest(
    *, table: Table, benchmark_id: int, user_id: int, links: bool, view: View, size: int, offset: int
) -> Iterator[str]:
    """The chunks of the view's CSV after its first ``offset`` rows (0: after the header's line), byte
    for byte as ``csv_chunks`` makes them for its reader ``user_id``, with no request: the rest of a
    download whose head was kept, made while nothing it shows changed (the view's rows in the same
    order, so the rows after the first ``offset`` are those the whole download writes after them)."""
    from django.contrib.auth import get_user_model

    benchmark = Benchmark.objects.get(pk=benchmark_id)
    user = get_user_model().objects.get(pk=user_id)
    context = Context.of(benchmark, user, links=links)
    batches, text = _csv_batches(table, context, view, table.columns(context), size=size, offset=offset)
    return spreadsheet_safe_chunks(None, batches, text=text)
