"""The shortcuts of the annotator's cycle in one process (docs/benchmarks.md, "The API's cycle in one
process"), each answering as what it replaces: one cursor kept per connection, instances of a few
fields, the dialect read from the settings, the API's routes tried first, statements built once,
a scheme's settings read once, the rows of an insert, the URL's length known without escaping it."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import re
from datetime import UTC, datetime, timedelta
from datetime import timezone as dt_timezone
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.core.exceptions import SynchronousOnlyOperation
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper
from django.db.models.signals import post_init
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from django.urls import NoReverseMatch, Resolver404, URLPattern, URLResolver, get_resolver, reverse
from django.urls.resolvers import RegexPattern
from django.utils import timezone
from django.utils.connection import ConnectionDoesNotExist
from rest_framework import serializers
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import ValidationError

from annotation import refresh_requests
from annotation.models import Label, LabelValue
from crowdlex import dialect as dialects
from crowdlex.api_errors import ApiMiddleware
from crowdlex.dialect import POSTGRESQL, SQLITE, KeptCursor, dialect
from crowdlex.sql import insert_rows, instance_of, kept_cursor
from hits.api import work
from hits.models import Answer, Assignment
from hits.selectors import hit_items, hit_page
from schemes.base import SchemeSettings, SchemeSettingsError, setting
from tests.base import Cast
from tests.hits.factories import make_benchmark, make_hits

pytestmark = pytest.mark.django_db


# --- one cursor kept per connection -----------------------------------------------------------


def _one(cursor: Any, value: int) -> int:
    cursor.execute("SELECT %s", [value])
    return int(cursor.fetchone()[0])


@pytest.mark.production_database(
    "PostgreSQL's cursors are kept open between statements (keeps_cursors), SQLite's are not"
)
def test_the_statements_of_a_connection_share_one_cursor_left_open() -> None:
    with kept_cursor() as first:
        assert _one(first, 1) == 1
    with kept_cursor() as second:
        assert _one(second, 2) == 2
    assert second is first and type(first) is KeptCursor
    assert not first.cursor.closed


@pytest.mark.django_db(transaction=True)
def test_a_new_connection_gets_a_new_cursor() -> None:
    with kept_cursor() as first:
        _one(first, 1)
    connection.close()
    connection.ensure_connection()
    with kept_cursor() as second:
        assert _one(second, 3) == 3
    assert second is not first


def test_a_cursor_closed_by_hand_is_replaced() -> None:
    with kept_cursor() as first:
        first.close()
    with kept_cursor() as second:
        assert _one(second, 4) == 4
    assert second is not first


@pytest.mark.production_database("reads whether psycopg2's cursor is closed")
@pytest.mark.django_db(transaction=True)
def test_a_connection_not_open_yet_gets_djangos_cursor_which_opens_it() -> None:
    connection.close()
    with kept_cursor() as cursor:
        assert type(cursor) is CursorWrapper
        assert _one(cursor, 5) == 5
    assert cursor.cursor.closed


def test_counted_statements_go_through_djangos_cursor() -> None:
    connection.ensure_connection()
    with CaptureQueriesContext(connection) as captured, kept_cursor() as cursor:
        assert isinstance(cursor, CursorDebugWrapper)
        _one(cursor, 6)
    assert [query["sql"] for query in captured.captured_queries] == ["SELECT 6"]


@pytest.mark.production_database("reads whether psycopg2's cursor is closed")
def test_a_dialect_that_keeps_no_cursor_gets_djangos_closed_after_each_block(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not SQLITE.keeps_cursors
    monkeypatch.setattr(type(POSTGRESQL), "keeps_cursors", False)
    connection.ensure_connection()
    with kept_cursor() as cursor:
        assert type(cursor) is CursorWrapper
        _one(cursor, 7)
    assert cursor.cursor.closed


def test_an_event_loop_is_refused_a_cursor_as_by_django(monkeypatch: pytest.MonkeyPatch) -> None:
    # The browser tests' modules allow it for their whole process; Django's check is what is tested.
    monkeypatch.delenv("DJANGO_ALLOW_ASYNC_UNSAFE", raising=False)
    connection.ensure_connection()

    async def inside() -> None:
        kept_cursor()

    with pytest.raises(SynchronousOnlyOperation):
        asyncio.run(inside())


# --- instances of a few fields ------------------------------------------------------------------


def _same(built: Any, loaded: Any) -> None:
    assert type(built) is type(loaded)
    assert list(vars(built)) == list(vars(loaded))
    values = {key: value for key, value in vars(built).items() if key != "_state"}
    assert values == {key: value for key, value in vars(loaded).items() if key != "_state"}
    assert (built._state.adding, built._state.db) == (loaded._state.adding, loaded._state.db)


def test_an_instance_of_a_few_fields_is_what_from_db_gives(cast: Cast) -> None:
    _same(
        instance_of(Token, key="k" * 40, user_id=cast.alice.pk),
        Token.from_db("default", ["key", "user_id"], ["k" * 40, cast.alice.pk]),
    )
    _same(instance_of(Assignment, id=12), Assignment.from_db(DEFAULT_DB_ALIAS, ["id"], [12]))
    assert (
        instance_of(Assignment, id=12).get_deferred_fields()
        == Assignment.from_db("default", ["id"], [12]).get_deferred_fields()
    )


def test_an_instance_of_a_model_with_an_init_receiver_goes_through_init() -> None:
    seen: list[Any] = []

    def receiver(sender: Any, instance: Any, **kwargs: Any) -> None:
        seen.append(instance)

    post_init.connect(receiver, sender=Assignment)
    try:
        built = instance_of(Assignment, id=12)
    finally:
        post_init.disconnect(receiver, sender=Assignment)
    assert seen == [built]


# --- the dialect from the settings ----------------------------------------------------------------


def test_the_dialect_is_the_connections_and_follows_a_dialect_put_under_its_vendor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    vendor = connections[DEFAULT_DB_ALIAS].vendor
    own = dialects.BY_VENDOR[vendor]
    assert dialect() is own and own in (POSTGRESQL, SQLITE)
    other = SQLITE if own is POSTGRESQL else POSTGRESQL
    monkeypatch.setitem(dialects.BY_VENDOR, vendor, other)
    assert dialect() is other
    with pytest.raises(ConnectionDoesNotExist):
        dialect("no-such-alias")


# --- the API's routes first ------------------------------------------------------------------------

_SAMPLES = ["7", "a-slug", "a-str", "a/path", "12345678-1234-5678-1234-567812345678"]


def _sample_paths() -> list[str]:
    """A path for each way of each named route of the site (converters given a value they take),
    and some the names do not reach."""
    paths = {"/api/schema/", "/api/auth-token/", "/admin/login/", "/healthz", "/api/no-such-thing", "/api/work/claim/"}
    resolver = get_resolver()
    names = [name for name in resolver.reverse_dict if isinstance(name, str)]
    names += [
        f"admin:{name}" for name in get_resolver().namespace_dict["admin"][1].reverse_dict if isinstance(name, str)
    ]
    for name in names:
        base = name.split(":")[-1]
        found = (resolver.namespace_dict["admin"][1] if name.startswith("admin:") else resolver).reverse_dict.getlist(
            base
        )
        for possibilities, _, _, converters in found:
            for _, params in possibilities:
                kwargs = {}
                for param in params:
                    converter = converters.get(param)
                    regex = converter.regex if converter is not None else "[^/]+"
                    kwargs[param] = next(sample for sample in _SAMPLES if re.fullmatch(regex, sample))
                try:
                    paths.add(reverse(name, kwargs=kwargs))
                except NoReverseMatch:
                    continue
    return sorted(paths)


def _resolved(resolver: URLResolver, path: str) -> Any:
    try:
        match = resolver.resolve(path)
    except Resolver404:
        return None
    return (match.func, match.args, match.kwargs, match.url_name, match.route, match.namespaces)


def test_every_path_resolves_as_with_the_api_routes_where_they_were() -> None:
    patterns: list[URLPattern | URLResolver] = list(get_resolver().url_patterns)
    first = patterns[0]
    assert isinstance(first, URLResolver) and first.urlconf_name.__name__ == "hits.api"  # type: ignore[union-attr]
    # Where it was: after the annotation app's routes.
    before = next(
        index
        for index, pattern in enumerate(patterns)
        if isinstance(pattern, URLResolver) and getattr(pattern.urlconf_name, "__name__", "") == "annotation.api"
    )
    former = [*patterns[1 : before + 1], first, *patterns[before + 1 :]]
    site = get_resolver()
    was = URLResolver(RegexPattern(r"^/"), former)
    paths = _sample_paths()
    assert "/api/work/claim" in paths and "/api/work/assignments/7/submit" in paths and len(paths) > 150
    for path in paths:
        assert _resolved(site, path) == _resolved(was, path), path


# --- statements built once ---------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [0, 1, 2, 5])
def test_a_touchs_statements_kept_are_those_built(workers: int) -> None:
    for sql in (POSTGRESQL, SQLITE):
        kept = refresh_requests._statements_kept(sql, workers)
        assert kept == refresh_requests._statements(sql, workers)
        assert bool(kept[3]) == sql.chains_writes


def test_a_touch_of_one_worker_queues_a_refresh_once(cast: Cast) -> None:
    benchmark = make_benchmark()
    worker = cast.alice.worker
    assert refresh_requests.refresh_touch(benchmark_id=benchmark.pk, worker_ids=[worker.pk], target_ids=[1])
    assert not refresh_requests.refresh_touch(benchmark_id=benchmark.pk, worker_ids=[worker.pk], target_ids=[2])
    assert not refresh_requests.refresh_touch(benchmark_id=benchmark.pk, worker_ids=[])
    touched = refresh_requests.RefreshTouched.objects.get(benchmark_id=benchmark.pk, worker_id=worker.pk)
    assert (touched.touches, touched.target_ids) == (2, [1, 2])
    others = [cast.bob.worker.pk, cast.carol.worker.pk]
    assert not refresh_requests.refresh_touch(benchmark_id=benchmark.pk, worker_ids=[worker.pk, *others])
    touches = refresh_requests.RefreshTouched.objects.filter(benchmark_id=benchmark.pk).order_by("worker_id")
    assert sorted(touches.values_list("worker_id", "touches")) == sorted(
        [(worker.pk, 3), (others[0], 1), (others[1], 1)]
    )


# --- a scheme's settings read once --------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Settings(SchemeSettings):
    share: float = setting(0.5, minimum=-1.0, maximum=1.0)
    rounds: int = setting(3, minimum=0, maximum=9)
    strict: bool = setting(False)


def _fresh(data: Any) -> Any:
    try:
        return _Settings._from_json(data)
    except SchemeSettingsError as error:
        return error.message_dict


def _read(data: Any) -> Any:
    try:
        return _Settings.from_json(data)
    except SchemeSettingsError as error:
        return error.message_dict


BODIES = [
    None,
    {},
    {"share": 0.25},
    {"share": 0.25, "rounds": 2},
    {"rounds": 2, "share": 0.25},
    {"share": 0.0},
    {"share": -0.0},
    {"share": math.nan},
    {"rounds": 1},
    {"rounds": True},
    {"strict": True},
    {"strict": 1},
    {"share": 5.0},
    {"share": "0.5"},
    {"unknown": 1},
    {"rounds": [1]},
]


def test_settings_read_again_are_those_read_fresh_whatever_came_before() -> None:
    for previous in BODIES:
        for data in BODIES:
            _read(previous)
            read, fresh = _read(data), _fresh(data)
            assert type(read) is type(fresh) and repr(read) == repr(fresh), (previous, data)


def test_the_same_settings_read_twice_are_one_object() -> None:
    first = _Settings.from_json({"share": 0.25, "rounds": 2})
    assert _Settings.from_json({"share": 0.25, "rounds": 2}) is first
    assert _Settings.from_json({"share": 0.25, "rounds": 3}) is not first


# --- the rows of an insert ---------------------------------------------------------------------------


def test_inserted_rows_hold_what_the_orm_would_store(cast: Cast) -> None:
    hit = make_hits(make_benchmark(), 1)[0]
    now = timezone.now()
    assignment = Assignment.objects.create(
        hit=hit, worker=cast.alice.worker, status="submitted", claimed_at=now, deadline=now
    )
    items = list(hit.items.order_by("position"))
    values = [LabelValue.ACCEPT, "reject", LabelValue.ABSTAIN]
    data = [None, {"a": 1}, "x"]
    insert_rows(
        Answer,
        [
            {"assignment_id": assignment.pk, "item_id": item.pk, "value": value, "data": datum}
            for item, value, datum in zip(items[:3], values, data, strict=True)
        ],
    )
    stored = list(Answer.objects.filter(assignment=assignment).order_by("item__position").values_list("value", "data"))
    assert stored == [("accept", None), ("reject", {"a": 1}), ("abstain", "x")]
    candidate = next(item.candidate_id for item in items if item.candidate_id is not None)
    insert_rows(
        Label,
        [
            {
                "candidate_id": candidate,
                "benchmark_id": hit.batch.benchmark_id,
                "value": LabelValue.REJECT,
                "step": 2,
                "worker_id": cast.alice.worker.pk,
                "assignment_id": assignment.pk,
            }
        ],
    )
    label = Label.objects.get(assignment=assignment)
    assert (label.value, label.origin, label.position, label.raw_value) == ("reject", "", 0, "")
    assert type(label.value) is str and label.created_at is not None


# --- the URL's length known without escaping it ------------------------------------------------------


def _refused(path: str, query: str, limit: int, settings: Any) -> bool:
    settings.API_MAX_URL_LENGTH = limit
    request = RequestFactory().post(path, QUERY_STRING=query)
    request.path = request.path_info = path
    request.META["QUERY_STRING"] = query
    response = ApiMiddleware(lambda request: HttpResponse("ok"))(request)
    return response.status_code == 414


@pytest.mark.parametrize("path", ["/api/work/claim", "/api/" + "é" * 10, "/api/" + "\U0001f600" * 5, "/api/a b<>"])
@pytest.mark.parametrize("query", ["", "x=1", "q=é€"])
def test_a_url_is_refused_past_its_limit_as_its_escaped_length_says(path: str, query: str, settings: Any) -> None:
    request = HttpRequest()
    request.path = request.path_info = path
    request.META["QUERY_STRING"] = query
    length = len(request.get_full_path())
    for limit in range(1, length + 3):
        assert _refused(path, query, limit, settings) == (length > limit), (path, query, limit)


# --- the claim's body: its times and its items -------------------------------------------------------


TIMES = [
    None,
    datetime(2026, 11, 28, 6, 0, tzinfo=UTC),
    datetime(2026, 11, 28, 6, 0, 1, 250, tzinfo=UTC),
    datetime(2026, 3, 29, 1, 30, tzinfo=ZoneInfo("Europe/Paris")),
    datetime(2026, 11, 28, 6, 0, tzinfo=dt_timezone(timedelta(hours=-3, minutes=-30))),
    datetime(2026, 11, 28, 6, 0),
    datetime(1, 1, 1, 0, 0, tzinfo=dt_timezone(timedelta(hours=1))),
]


@pytest.mark.parametrize("zone", [None, "Europe/Paris", "America/St_Johns"])
def test_a_time_is_written_as_drfs_field_writes_it(zone: str | None, settings: Any) -> None:
    field = serializers.DateTimeField()
    with timezone.override(zone) if zone else contextlib.nullcontext():
        for value in TIMES:
            try:
                expected = field.to_representation(value) if value is not None else None
            except ValidationError as error:
                with pytest.raises(ValidationError) as raised:
                    work._datetime(value)
                assert raised.value.detail == error.detail
                continue
            assert work._datetime(value) == expected, value
    settings.USE_TZ = False
    naive = datetime(2026, 11, 28, 6, 0)
    assert work._datetime(naive) == field.to_representation(naive)


def test_a_hits_items_are_those_of_its_page(cast: Cast) -> None:
    hit = make_hits(make_benchmark(), 1)[0]
    page = hit_page(hit_id=hit.pk)
    assert hit_items(hit_id=hit.pk) == (page.context, page.word, page.offset, [(row.id, row.text) for row in page.rows])
    hit.items.all().delete()
    page = hit_page(hit_id=hit.pk)
    assert hit_items(hit_id=hit.pk) == (page.context, page.word, page.offset, [])
