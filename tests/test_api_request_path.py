"""The API's request path as production serves it (``crowdlex.wsgi.application``): each ``/api/``
path resolved once, the headers and refusals of a token and of a session unchanged, and the
shortcuts of that path (negotiation, the never-cache headers, instances from rows) answering as
what they replace."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.db.models.signals import post_init
from django.http import HttpRequest, HttpResponse
from django.test import Client, RequestFactory
from django.urls import get_resolver
from django.urls.resolvers import URLResolver
from django.utils.cache import add_never_cache_headers
from django.views.decorators.cache import never_cache as django_never_cache
from rest_framework import exceptions
from rest_framework.authtoken.models import Token
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.parsers import JSONParser as DrfJSONParser
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from annotation.models import Worker
from crowdlex.middleware import NEVER_CACHE, never_cache, never_cached
from crowdlex.negotiation import ContentNegotiation
from crowdlex.parsers import JSONParser
from crowdlex.sql import execute, instances, select_columns
from crowdlex.wsgi import application
from tests.base import Cast
from tests.hits.factories import make_benchmark, make_hits
from tests.wsgi import wsgi_call

pytestmark = pytest.mark.django_db


def call(path: str, body: Any = None, **headers: str) -> tuple[int, dict[str, str], bytes]:
    """One POST (a GET without a body) through production's WSGI application."""
    data = b"" if body is None else json.dumps(body).encode()
    headers.setdefault("CONTENT_TYPE", "application/json")
    status, answered, content = wsgi_call(application, "GET" if body is None else "POST", path, data, **headers)
    return status, dict(answered), content


@pytest.fixture
def resolutions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the site's URLconf resolves, one entry each time (included URLconfs not counted)."""
    paths: list[str] = []
    resolve = URLResolver.resolve

    def counted(self: URLResolver, path: str) -> Any:
        if self is get_resolver():
            paths.append(path)
        return resolve(self, path)

    monkeypatch.setattr(URLResolver, "resolve", counted)
    return paths


def _token(cast: Cast) -> str:
    make_hits(make_benchmark(), 3)
    return Token.objects.get_or_create(user=cast.alice)[0].key


def test_an_api_request_resolves_its_path_once(cast: Cast, served: None, resolutions: list[str]) -> None:
    token = _token(cast)
    status, _, body = call("/api/work/claim", {}, HTTP_AUTHORIZATION=f"Token {token}")
    assert status == 200
    assert resolutions == ["/api/work/claim"]
    resolutions.clear()
    claimed = json.loads(body)
    answers = {str(item["id"]): "accept" for item in claimed["items"]}
    status, _, _ = call(
        f"/api/work/assignments/{claimed['id']}/submit",
        {"answers": answers, "seconds_on_page": 3.0},
        HTTP_AUTHORIZATION=f"Token {token}",
    )
    assert status == 200
    assert resolutions == [f"/api/work/assignments/{claimed['id']}/submit"]


def test_the_other_spelling_is_resolved_once_after_the_one_sent(
    cast: Cast, served: None, resolutions: list[str]
) -> None:
    status, _, _ = call("/api/work/claim/", {}, HTTP_AUTHORIZATION=f"Token {_token(cast)}")
    assert status == 200
    assert resolutions == ["/api/work/claim/", "/api/work/claim"]


def test_a_page_and_an_unknown_api_path_are_resolved_as_django_resolves_them(
    served: None, resolutions: list[str]
) -> None:
    assert call("/healthz")[0] == 200
    assert resolutions == ["/healthz"]
    resolutions.clear()
    status, headers, body = call("/api/no-such-thing", {})
    assert status == 404 and headers["Content-Type"] == "application/json"
    assert json.loads(body) == {"detail": "Not found."}
    # Both spellings by the API's middleware, the one sent by Django, which answers its 404, then
    # both again by Django's CommonMiddleware, looking for a slash to append to a path not found.
    sent, other = "/api/no-such-thing", "/api/no-such-thing/"
    assert resolutions == [sent, other, sent, sent, other]


def test_an_api_answer_to_a_token_keeps_every_security_header(cast: Cast, served: None) -> None:
    status, headers, _ = call("/api/work/claim", {}, HTTP_AUTHORIZATION=f"Token {_token(cast)}")
    assert status == 200
    assert headers["Content-Type"] == "application/json"
    assert headers["Cache-Control"] == "max-age=0, no-cache, no-store, must-revalidate, private"
    assert "Expires" in headers
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Content-Security-Policy"].startswith("default-src")
    assert "Vary" in headers and "Accept" in headers["Vary"]


def test_a_bad_token_is_refused_with_its_challenge(served: None) -> None:
    status, headers, body = call("/api/work/claim", {}, HTTP_AUTHORIZATION="Token nonsense")
    assert status == 401 and headers["WWW-Authenticate"] == "Token"
    assert json.loads(body) == {"detail": "Invalid token."}


def test_a_session_post_to_the_api_still_needs_its_csrf_token(cast: Cast, served: None) -> None:
    make_hits(make_benchmark(), 3)
    browser = Client()
    browser.force_login(cast.alice)
    session = browser.cookies["sessionid"].value
    status, _, body = call("/api/work/claim", {}, HTTP_COOKIE=f"sessionid={session}")
    assert status == 403
    assert "CSRF" in json.loads(body)["detail"]
    secret = "a" * 32
    status, _, _ = call(
        "/api/work/claim", {}, HTTP_COOKIE=f"sessionid={session}; csrftoken={secret}", HTTP_X_CSRFTOKEN=secret
    )
    assert status == 200


ACCEPTS = [
    None,
    "*/*",
    "application/json",
    "text/html",
    "application/json; indent=4",
    "application/*",
    "text/html, */*;q=0.8",
    "image/png",
]


@pytest.mark.parametrize("accept", ACCEPTS)
@pytest.mark.parametrize("query", ["", "format=api", "format=json", "page=2"])
@pytest.mark.parametrize(
    "renderers", [[JSONRenderer(), BrowsableAPIRenderer()], [BrowsableAPIRenderer(), JSONRenderer()]]
)
def test_negotiation_answers_as_drfs(accept: str | None, query: str, renderers: list[Any]) -> None:
    sent = APIRequestFactory().get(f"/api/benchmarks/?{query}")
    if accept is not None:
        sent.META["HTTP_ACCEPT"] = accept
    request = Request(sent)

    def chosen(negotiation: DefaultContentNegotiation) -> Any:
        try:
            renderer, media_type = negotiation.select_renderer(request, renderers)
        except exceptions.NotAcceptable:
            return "not acceptable"
        return type(renderer), media_type

    assert chosen(ContentNegotiation()) == chosen(DefaultContentNegotiation())


# A response as a view left it: no caching header, another policy, an expiry alone, and marked
# never-cached already (by ``never_cached``), in full or in part.
EXISTING = [
    {},
    {"Cache-Control": "public, max-age=60"},
    {"Expires": "0"},
    {"Cache-Control": NEVER_CACHE, "Expires": "Thu, 01 Jan 2026 00:00:00 GMT"},
    {"Cache-Control": NEVER_CACHE},
    {"Cache-Control": "max-age=0, no-cache, private", "Expires": "Thu, 01 Jan 2026 00:00:00 GMT"},
]


@pytest.mark.parametrize("existing", EXISTING)
def test_the_never_cache_headers_are_djangos(existing: dict[str, str]) -> None:
    ours, djangos = HttpResponse(headers=existing), HttpResponse(headers=existing)
    never_cache(ours)
    add_never_cache_headers(djangos)
    assert dict(ours.headers) == dict(djangos.headers)


@pytest.mark.parametrize("existing", EXISTING)
def test_a_never_cached_view_answers_as_with_djangos_decorator_and_the_layer(existing: dict[str, str]) -> None:
    """The view's decorator, and then the security headers' layer for an account, as Django's
    decorator and then the layer: the same headers, whatever the view set."""

    def view(request: HttpRequest) -> HttpResponse:
        return HttpResponse(headers=existing)

    request = RequestFactory().get("/")
    ours, djangos = never_cached(view)(request), django_never_cache(view)(request)
    # As an anonymous reader gets it, and then through the layer as an account gets it.
    assert dict(ours.headers) == dict(djangos.headers)
    never_cache(ours)
    never_cache(djangos)
    assert dict(ours.headers) == dict(djangos.headers)


def _account_row(user: User) -> list[Any]:
    with connection.cursor() as cursor:
        execute(
            cursor,
            f"SELECT {select_columns((User, 'u'), (Worker, 'w'))} FROM {User._meta.db_table} u"
            f" LEFT JOIN {Worker._meta.db_table} w ON w.user_id = u.id WHERE u.id = %s",
            [user.pk],
        )
        return list(cursor.fetchone())


def _same(built: Any, loaded: Any) -> None:
    assert type(built) is type(loaded)
    values = {key: value for key, value in vars(built).items() if key != "_state"}
    assert values == {key: value for key, value in vars(loaded).items() if key != "_state"}
    assert (built._state.adding, built._state.db) == (loaded._state.adding, loaded._state.db)


def test_instances_from_a_row_are_the_orms(cast: Cast) -> None:
    user, worker = instances(_account_row(cast.alice), (User, "u"), (Worker, "w"))
    _same(user, User.objects.get(pk=cast.alice.pk))
    _same(worker, Worker.objects.get(user=cast.alice))
    assert user.worker is not None and not user._state.adding


def test_instances_of_a_model_with_an_init_receiver_go_through_init(cast: Cast) -> None:
    seen: list[Any] = []

    def receiver(sender: Any, instance: Any, **kwargs: Any) -> None:
        seen.append(instance)

    post_init.connect(receiver, sender=Worker)
    try:
        _, worker = instances(_account_row(cast.alice), (User, "u"), (Worker, "w"))
    finally:
        post_init.disconnect(receiver, sender=Worker)
    assert seen == [worker]
    _same(worker, Worker.objects.get(user=cast.alice))


CONTENT_TYPES = [
    None,
    "",
    "application/json",
    "application/json; charset=utf-8",
    "APPLICATION/JSON",
    "application/*",
    "*/*",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/json" + " " * 300,
    "application/jsonx",
]


@pytest.mark.parametrize("content_type", CONTENT_TYPES)
@pytest.mark.parametrize(
    "parsers",
    [
        [JSONParser(), FormParser(), MultiPartParser()],
        [FormParser(), JSONParser()],
        [DrfJSONParser()],
        [],
    ],
)
def test_a_body_goes_to_the_parser_drf_chooses(content_type: str | None, parsers: list[Any]) -> None:
    sent = APIRequestFactory().post("/api/work/claim")
    sent.META.pop("CONTENT_TYPE", None)
    if content_type is not None:
        sent.META["CONTENT_TYPE"] = content_type
    request = Request(sent)

    assert ContentNegotiation().select_parser(request, parsers) is DefaultContentNegotiation().select_parser(
        request, parsers
    )


BODIES = [
    b"{}",
    b'{"answers": {"1": "accept"}, "seconds_on_page": 1.5}',
    b"",
    b" ",
    b"[1, 2",
    b'{"a": NaN}',
    b'{"a": Infinity}',
    b'{"a": 1}\xc3',
    b'{"a": "\xc3\xa9"}',
    b'{"a": "\xff"}',
    b"\xef\xbb\xbf{}",
    b'{"a": 1} x',
    '{"a": "\u00e9\u4e2d\U0001f600"}'.encode(),
    b"[" * 5000 + b"]" * 5000,
]


def _parsed(parser: Any, body: bytes, encoding: str) -> Any:
    try:
        return parser.parse(io.BytesIO(body), "application/json", {"encoding": encoding})
    except exceptions.ParseError as error:
        return "ParseError", str(error.detail)


@pytest.mark.parametrize("body", BODIES)
@pytest.mark.parametrize("encoding", ["utf-8", "latin-1", "utf-16"])
@pytest.mark.parametrize("strict", [True, False])
def test_a_json_body_is_read_as_drf_reads_it(body: bytes, encoding: str, strict: bool) -> None:
    ours, drfs = JSONParser(), DrfJSONParser()
    ours.strict = drfs.strict = strict
    try:
        expected = _parsed(drfs, body, encoding)
    except RecursionError:
        # Where DRF's own parser gives up; this one answers 400 (``crowdlex.parsers``).
        expected = "ParseError", "JSON parse error - nested too deeply"
    assert _parsed(ours, body, encoding) == expected
