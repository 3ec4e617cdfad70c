"""Researcher pages kept whole in the shared cache while nothing they show changed (docs/design.md §7,
"Kept pages").

A page that opts in (``kept_page``) is a function of its reader's session and account, the change
key of the benchmark it shows and the figures' period. So its final answer (after every
middleware) is kept in Redis under the session's key, the host, the path and query string and the
``If-None-Match`` it answered, and a thin WSGI layer in front of Django (``KeptPages``, applied in
``crowdlex.wsgi``) answers the next request for it with:

- one round trip to Redis: a script that reads the kept answer beside what the session store reads
  anyway (the session and the signed-in account's stamps, ``crowdlex.accounts.LOAD_FUNCTION``);
- one statement: the change key of each benchmark the page read (``annotation.changes``);

and serves it only if the session is byte for byte the one it was made under, the account's
pointer, version and epoch stamps are the same, the CSRF cookie is the same (the page's tokens are
made from it), the request headers the answer varies on are the same, the figures' period is the
same and every change key is the same. Anything else, or any error, goes to Django as before; the
session and account the script read are handed to the session store, so the request still makes
one round trip to Redis for them.

Why a kept answer is never older than its stamps (the argument of ``annotation.changes``): the
stamps it is stored with are read before Django runs (the session, the account's stamps, the
period) and the change keys before the view reads anything (``kept_page``). A change that commits
meanwhile moves its stamp or key after (or with) its data, so the answer stored is newer than the
stamps it carries, never older, and the next request finds a stamp moved and goes to Django.

An answer is kept only when it is a whole 200 (or the live poll's 304) to a GET that passed
``kept_page``, sets no cookie, left the session as it was, read or added no message, and is at
most ``KEPT_PAGE_MAX_BYTES`` long; for ``KEPT_PAGE_SECONDS``. A streamed answer (a CSV download) is
collected as it passes through, at most that many bytes of it, and kept once its body ended
without an error; a longer one is streamed on and never kept whole. An answer found longer than the
cap leaves a mark under its key for ``KEPT_PAGE_SECONDS`` (``_too_long``): the next request for it,
reading the mark in the script's round trip, goes to Django reading no change key. A longer
download that can be made again from any of its chunks on without Django (``Resumable``: a CSV's
rows from a position) keeps its head instead once its body ended: its first chunks, at most
``KEPT_PAGE_HEAD_BYTES``, and the call that makes the chunks after them; the next request served
from it is sent the head and then the rest, made as it is read.

A page that also shows an entry of the shared cache its writer moves outside any transaction (an
import job's progress) names it in its route (``Benchmarks.watch``): the script reads it beside
the kept answer, before Django runs, and the answer is served only while it is byte for byte the
one read before the page was made. Without a shared Redis cache (the
embedded default), with the setting at 0 or with accounts not kept (``ACCOUNT_KEPT_SECONDS`` 0),
the layer passes every request straight to Django.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import logging
import pickle
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.core.signals import setting_changed
from django.http import HttpResponseBase
from django.http.cookie import parse_cookie
from django.urls import Resolver404, URLResolver, get_resolver, resolve
from django.urls.resolvers import RegexPattern, RoutePattern
from django.utils.http import http_date

from crowdlex import accounts

logger = logging.getLogger(__name__)

# Where the layer hands a request's state to ``kept_page`` (the request's META).
ENVIRON_KEY = "crowdlex.kept_page"
# Set in the environ of a request answered from a kept answer (read by bench.pages).
SERVED_KEY = "crowdlex.kept_page.served"
# The kept answer's layout; a deployment that changes it reads none of the answers kept before.
_FORMAT = 3
# The prefix of the session's key in the cache (Django's ``cached_db`` store).
_SESSION_PREFIX = "django.contrib.sessions.cached_db"
# The kept answer, read beside the session and the account (keys 1-3 and arguments 1-2 are theirs),
# and the entries the page watches (keys 5 on: ``Benchmarks.watch``).
_LOAD = accounts.LOAD_FUNCTION + (
    "local watched = {}\n"
    "if #KEYS > 4 then watched = redis.call('MGET', unpack(KEYS, 5)) end\n"
    "return {redis.call('GET', KEYS[4]), session_and_account(), watched}\n"
)
# What a kept answer's key holds, followed by the cap, when the answer was longer than the cap
# (``KEPT_PAGE_MAX_BYTES``): the next request for it goes to Django without reading its keys.
_TOO_LONG = b"crowdlex-too-long:"
# Paths whose route opted in, by path, remembered per process (at most this many).
_ROUTES_KEPT = 4096


@dataclass
class Candidate:
    """A GET that may be answered from, or kept as, a kept answer: what was read before Django ran."""

    key: str
    session_key: str
    session_digest: bytes
    account: tuple[str, bytes, bytes]
    csrf: str | None
    period: int
    # The entries of the shared cache the page watches (``Benchmarks.watch``) as the script read them.
    watched: tuple[bytes | None, ...] = ()
    # Filled by ``kept_page`` before the view reads anything: (benchmark id, change key) of each, the
    # site's among them under ``annotation.changes.SITE_KEY_ID``; () for a page of the account alone.
    benchmarks: tuple[tuple[int, str], ...] | None = None
    request: Any = None


@dataclass(frozen=True)
class Kept:
    """A kept answer and the stamps it was made under."""

    session_digest: bytes
    account: tuple[str, bytes, bytes]
    csrf: str | None
    period: int
    benchmarks: tuple[tuple[int, str], ...]
    watched: tuple[bytes | None, ...]
    # (environ key, value) of each request header the answer varies on, the Cookie header aside.
    vary: tuple[tuple[str, str | None], ...]
    status: str
    headers: tuple[tuple[str, str], ...] = field(default=())
    body: bytes = b""
    # For the head of a longer download (``Resumable``): the call that makes the chunks after it.
    rest: Callable[[], Iterable[str | bytes]] | None = None


# What a streamed answer made by a ``Resumable`` carries, for the layer: ``Resumable.rest_after``.
REST_ATTRIBUTE = "kept_rest_after"


class Resumable:
    """The chunks of a streamed download, each with the position after it (what its maker needs to
    make the chunks after it again: the last row's id, the rows sent), and ``rest``, which turns a
    position into a call that makes the chunks after it, byte for byte, with no request: a function
    of its module (or a ``functools.partial`` of one) and plain arguments, kept in the cache beside
    the head (``Kept.rest``). The call runs when the head is served again, under the stamps it was
    kept under: while they are the same, what the download shows has not changed, so the head and
    the rest made then are the download made whole (docs/design.md §7, "Kept pages")."""

    def __init__(
        self, chunks: Iterable[tuple[str, Any]], rest: Callable[[Any], Callable[[], Iterable[str | bytes]]]
    ) -> None:
        self.chunks = chunks
        self.rest = rest
        # The position after each chunk made so far.
        self.positions: list[Any] = []

    def __iter__(self) -> Iterator[str]:
        for chunk, position in self.chunks:
            self.positions.append(position)
            yield chunk

    def close(self) -> None:
        close = getattr(self.chunks, "close", None)
        if close is not None:
            close()

    def rest_after(self, sent: int) -> Callable[[], Iterable[str | bytes]] | None:
        """The call that makes the chunks after the first ``sent`` (None before any was made)."""
        if not 0 < sent <= len(self.positions):
            return None
        return self.rest(self.positions[sent - 1])


def resumable(response: Any, chunks: Iterable[Any]) -> Any:
    """``response`` (streaming ``chunks``) marked for the layer when ``chunks`` is a ``Resumable``: a
    body longer than the cap keeps its head and the call that makes the rest."""
    if isinstance(chunks, Resumable):
        setattr(response, REST_ATTRIBUTE, chunks.rest_after)
    return response


@dataclass(frozen=True)
class Benchmarks:
    """How a kept page finds the benchmark it shows from its URL's keyword ``kwarg``: ``sql``, a
    query of one column ``id`` taking the keyword's value (the statement that reads the change key
    wraps it: one statement for both). ``site``: the page also shows what moves the site's change
    key (``annotation.changes.site_changed``: accounts' names, memberships), read in that statement
    too. A page whose query selects no benchmark is not kept. ``watch``: the keys (as the default
    cache names them, before its prefix) of the entries of the shared cache the page shows beside,
    from its URL's keywords, which their writer moves outside any transaction (``Candidate.watched``)."""

    kwarg: str
    sql: str
    site: bool = False
    watch: Callable[[Mapping[str, Any]], tuple[str, ...]] | None = None

    def keys(self, request: Any, kwargs: Mapping[str, Any]) -> tuple[tuple[int, str], ...] | None:
        found = change_keys(self.sql, [kwargs[self.kwarg]], site=self.site)
        return found if any(found_id != _site_key_id() for found_id, _ in found) else None


@dataclass(frozen=True)
class Visible:
    """The benchmarks the reader sees, for a page that lists them (the benchmarks' list): the change
    key of each and the site's (which moves when one is made, renamed or deleted, or a role in one
    is granted or taken away), in one statement; served again while none of them moved."""

    def keys(self, request: Any, kwargs: Mapping[str, Any]) -> tuple[tuple[int, str], ...] | None:
        from annotation.access import benchmarks_visible_sql

        visible = benchmarks_visible_sql(request.user, "b")
        if visible is None:
            return None
        condition, params = visible
        where = f" WHERE {condition}" if condition else ""
        return change_keys(f"SELECT b.id FROM {_table('annotation.Benchmark')} b{where}", list(params), site=True)


@dataclass(frozen=True)
class Everything:
    """A page that shows what any benchmark's change, the site's or the clock moves (the people's
    list and a person's page: each annotator's account, last visit, and HITs of the last day and
    week in any benchmark): the site's change key and the key of every benchmark's changes
    (``annotation.changes.every_keys_statement``), in one statement. A sign-in saves the account
    (the site's key); a claim and the clock's part lag at most ``KEPT_PAGE_SECONDS``, the answer's
    life."""

    def keys(self, request: Any, kwargs: Mapping[str, Any]) -> tuple[tuple[int, str], ...] | None:
        return every_change_keys()


@dataclass(frozen=True)
class AccountOnly:
    """A page that shows nothing but its reader's account and session (a form): kept with no
    statement, its check the script alone."""

    def keys(self, request: Any, kwargs: Mapping[str, Any]) -> tuple[tuple[int, str], ...] | None:
        return ()


# What a kept page's change keys are read from (``kept_page``'s ``benchmark``).
KeySource = Benchmarks | Visible | Everything | AccountOnly


def _benchmarks(
    kwarg: str,
    sql: Callable[[], str],
    site: bool = False,
    watch: Callable[[Mapping[str, Any]], tuple[str, ...]] | None = None,
) -> Callable[[], Benchmarks]:
    return functools.cache(lambda: Benchmarks(kwarg, sql(), site, watch))


def _table(app_model: str) -> str:
    from django.apps import apps

    return str(apps.get_model(app_model)._meta.db_table)


def _site_key_id() -> int:
    from annotation.changes import SITE_KEY_ID

    return SITE_KEY_ID


# The benchmark of a page, by what its URL names.
BY_NAME = _benchmarks("name", lambda: f"SELECT id FROM {_table('annotation.Benchmark')} WHERE name = %s")
BY_BATCH = _benchmarks("pk", lambda: f"SELECT benchmark_id AS id FROM {_table('hits.Batch')} WHERE id = %s")
BY_HIT = _benchmarks(
    "pk",
    lambda: (
        f"SELECT batch.benchmark_id AS id FROM {_table('hits.HIT')} hit "
        f"JOIN {_table('hits.Batch')} batch ON batch.id = hit.batch_id WHERE hit.id = %s"
    ),
)
BY_TARGET = _benchmarks("pk", lambda: f"SELECT benchmark_id AS id FROM {_table('annotation.Target')} WHERE id = %s")
# The benchmark by name, and the site: a page that also shows accounts' names (the access page, the
# import page's jobs, the batches' page, whose batch form offers the annotators by name).
BY_NAME_AND_SITE = _benchmarks(
    "name", lambda: f"SELECT id FROM {_table('annotation.Benchmark')} WHERE name = %s", site=True
)


def _import_job_progress(kwargs: Mapping[str, Any]) -> tuple[str, ...]:
    from annotation.importers.jobs import import_job_progress_key

    return (import_job_progress_key(int(kwargs["job_id"])),)


# An import job's benchmark, and the site (its creator's name); its state moves the benchmark's key
# (each write of its row) and its progress, kept in the cache while it runs, is watched: a job into
# a benchmark not made yet selects none and is not kept.
BY_IMPORT_JOB = _benchmarks(
    "job_id",
    lambda: (
        f"SELECT benchmark_id AS id FROM {_table('annotation.ImportJob')} WHERE id = %s AND benchmark_id IS NOT NULL"
    ),
    site=True,
    watch=_import_job_progress,
)
# The benchmarks the reader sees, and the site (the benchmarks' list).
VISIBLE: Callable[[], Visible] = functools.cache(Visible)
# Every benchmark's changes and the site's (the people's pages).
EVERYTHING: Callable[[], Everything] = functools.cache(Everything)
# Nothing but the reader's account and session (a form).
ACCOUNT_ONLY: Callable[[], AccountOnly] = functools.cache(AccountOnly)


def change_keys(benchmarks: str, params: list[Any], *, site: bool = False) -> tuple[tuple[int, str], ...]:
    """(id, change key) of each benchmark the query ``benchmarks`` selects, and with ``site`` the
    site's under ``annotation.changes.SITE_KEY_ID``, in one statement."""
    from django.db import connection

    from annotation.changes import change_keys_of, change_keys_statement, site_keys_statement

    with connection.cursor() as cursor:
        cursor.execute((site_keys_statement if site else change_keys_statement)(benchmarks), params)
        return tuple(sorted(change_keys_of(cursor.fetchall()).items()))


def every_change_keys() -> tuple[tuple[int, str], ...]:
    """The key of every benchmark's changes and the site's, in one statement (``Everything``)."""
    from django.db import connection

    from annotation.changes import change_keys_of, every_keys_statement

    with connection.cursor() as cursor:
        cursor.execute(every_keys_statement())
        return tuple(sorted(change_keys_of(cursor.fetchall()).items()))


def kept_page(*, benchmark: Callable[[], KeySource]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A page whose answer may be kept (docs/design.md §7, "Kept pages"): everything it shows moves
    the change key of the benchmark ``benchmark`` finds from its URL (``BY_NAME``, ``BY_BATCH``…),
    the site's change key (``BY_NAME_AND_SITE``, ``VISIBLE``…), every benchmark's and the site's
    (``EVERYTHING``) or the reader's account stamps (``ACCOUNT_ONLY``: those alone), or is allowed
    to lag by ``KEPT_PAGE_SECONDS`` (a claim). The keys are read here, before the view reads
    anything, so a kept answer is never older than them."""

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(view)
        def wrapper(request: Any, *args: Any, **kwargs: Any) -> Any:
            candidate = request.META.get(ENVIRON_KEY)
            if isinstance(candidate, Candidate) and candidate.request is None and request.method == "GET":
                candidate.request = request
                try:
                    candidate.benchmarks = benchmark().keys(request, kwargs)
                except Exception:
                    logger.exception("The change key of a kept page could not be read")
                if candidate.benchmarks is not None:
                    from annotation.changes import EVERY_KEY_ID, SITE_KEY_ID, one_figures_key_known

                    # The page's figures key is the key just read and the period read before Django
                    # ran: the page reads no key of its own (annotation.changes.figures_key).
                    known = {
                        found: f"{key}.{candidate.period}"
                        for found, key in candidate.benchmarks
                        if found not in (SITE_KEY_ID, EVERY_KEY_ID)
                    }
                    return one_figures_key_known(known, lambda: view(request, *args, **kwargs))
            return view(request, *args, **kwargs)

        wrapper.kept_page = True  # type: ignore[attr-defined]
        wrapper.kept_source = benchmark  # type: ignore[attr-defined]
        return wrapper

    return decorate


class _Layer:
    """The layer's state under one set of settings (see ``_layer``)."""

    def __init__(self, keeper: accounts.Keeper) -> None:
        self.keeper = keeper
        self.seconds = settings.KEPT_PAGE_SECONDS
        self.max_bytes = settings.KEPT_PAGE_MAX_BYTES
        # The head kept of a longer download (``Resumable``), never more than the cap.
        self.head_bytes = min(settings.KEPT_PAGE_HEAD_BYTES, self.max_bytes)
        # Stored in place of an answer found longer than the cap (``_too_long``), naming the cap.
        self.too_long = b"%s%d" % (_TOO_LONG, self.max_bytes)
        self.script = keeper.client.register_script(_LOAD)
        self.session_cookie = settings.SESSION_COOKIE_NAME
        self.csrf_cookie = settings.CSRF_COOKIE_NAME
        from django.contrib.messages.storage.cookie import CookieStorage

        self.messages_cookie = CookieStorage.cookie_name
        self.routes: dict[str, bool] = {}
        # The keys of the entries each kept path watches, for the paths whose route watches any.
        self.watching: dict[str, tuple[str, ...]] = {}
        # What the pages watch is written through the default cache; read here with the sessions'.
        self.default_cache = caches["default"] if caches["default"] is keeper.cache else None
        # The fixed beginnings of the kept routes' paths: a path that starts with none of them (an
        # annotator's page, whose path names its assignment) is passed on without resolving it.
        self.prefixes = tuple(sorted(set(_kept_prefixes(get_resolver().url_patterns, "/"))))
        # What every request through the layer calls, found once (the apps are ready by the first).
        from django.core.handlers.wsgi import get_path_info

        from annotation.warm import figures_period
        from crowdlex import sessions

        self.get_path_info = get_path_info
        self.figures_period = figures_period
        self.preloaded = sessions.preloaded

    def kept_route(self, path_info: str) -> bool:
        if not path_info.startswith(self.prefixes):
            return False
        found = self.routes.get(path_info)
        if found is None:
            watched: tuple[str, ...] = ()
            try:
                match = resolve(path_info)
                found = bool(getattr(match.func, "kept_page", False))
                source = getattr(match.func, "kept_source", lambda: None)() if found else None
                watch = getattr(source, "watch", None)
                if watch is not None:
                    if self.default_cache is None:
                        found = False
                    else:
                        watched = tuple(self.default_cache.make_key(key) for key in watch(match.kwargs))
            except Resolver404:
                found = False
            if len(self.routes) >= _ROUTES_KEPT:
                self.routes.clear()
                self.watching.clear()
            self.routes[path_info] = found
            if watched:
                self.watching[path_info] = watched
        return found


# What ends the fixed beginning of a route's pattern: a converter, or anything special to a regex.
_NOT_FIXED = re.compile(r"[<.^$*+?{}\[\]\\|()]")


def _fixed(pattern: Any) -> tuple[str, bool]:
    """The fixed beginning of a URL pattern, and whether it is the whole pattern."""
    text = str(pattern)
    if isinstance(pattern, RegexPattern):
        text = text.removeprefix("^")
        if text.endswith("$") and not _NOT_FIXED.search(text[:-1]):
            return text[:-1], True
    elif not isinstance(pattern, RoutePattern):
        return "", False
    found = _NOT_FIXED.search(text) if isinstance(pattern, RegexPattern) else re.search("<", text)
    return (text, True) if found is None else (text[: found.start()], False)


def _kept_prefixes(patterns: Iterable[Any], prefix: str) -> Iterator[str]:
    """The fixed beginning of the path of each route under ``patterns`` that opted in (``kept_page``)."""
    for pattern in patterns:
        fixed, whole = _fixed(pattern.pattern)
        if isinstance(pattern, URLResolver):
            if whole:
                yield from _kept_prefixes(pattern.url_patterns, prefix + fixed)
            elif any(True for _ in _kept_prefixes(pattern.url_patterns, "")):
                yield prefix + fixed
        elif getattr(pattern.callback, "kept_page", False):
            yield prefix + fixed


_UNSET: Any = object()
_current: Any = _UNSET


def _layer() -> _Layer | None:
    """The layer's state, or None where pages are not kept: no shared Redis cache for the sessions,
    ``KEPT_PAGE_SECONDS`` 0, or accounts not kept (their stamps are part of a kept answer's)."""
    global _current
    found = _current
    if found is _UNSET:
        keeper = accounts.keeper() if settings.SESSION_ENGINE == "crowdlex.sessions" else None
        found = _current = _Layer(keeper) if keeper is not None and settings.KEPT_PAGE_SECONDS > 0 else None
    return found  # type: ignore[no-any-return]


def _forget_layer(**kwargs: Any) -> None:
    global _current
    _current = _UNSET


setting_changed.connect(_forget_layer, dispatch_uid="kept-pages-settings")


def served_application() -> KeptPages:
    """The WSGI application production serves (``crowdlex.wsgi``), for a process whose Django is set
    up: this layer in front of Django's handler that resolves an ``/api/`` path once."""
    from crowdlex.api_errors import ResolvingOnceHandler

    return KeptPages(ResolvingOnceHandler())


class KeptPages:
    """The WSGI layer in front of Django's handler (``crowdlex.wsgi``)."""

    def __init__(self, application: Callable[..., Any]) -> None:
        self.application = application

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        layer = _layer() if environ.get("REQUEST_METHOD") in ("GET", "HEAD") else None
        if layer is None:
            return self.application(environ, start_response)  # type: ignore[no-any-return]
        return _handle(layer, self.application, environ, start_response)


def _handle(layer: _Layer, application: Callable[..., Any], environ: dict[str, Any], start_response: Any) -> Any:
    try:
        path_info = layer.get_path_info(environ)
        kept_route = layer.kept_route(path_info)
    except Exception:
        logger.exception("The route of a request could not be resolved")
        kept_route = False
    if not kept_route:
        return application(environ, start_response)
    cookies = parse_cookie(environ.get("HTTP_COOKIE", ""))
    session_key = cookies.get(layer.session_cookie)
    # A messages cookie emptied by the page that showed them holds none.
    if not session_key or len(session_key) < 8 or cookies.get(layer.messages_cookie):
        return application(environ, start_response)
    try:
        keeper = layer.keeper
        entry_key = keeper.cache.make_key("kept-page:" + _request_digest(session_key, environ))
        session_cache_key = keeper.cache.make_key(_SESSION_PREFIX + session_key)
        watching = layer.watching.get(path_info, ())
        entry, loaded, watched = layer.script(
            keys=[*keeper.load_keys(session_cache_key, session_key), entry_key, *watching], args=keeper.load_args()
        )
        raw_session, account = keeper.loaded(loaded)
    except Exception:
        logger.exception("A kept page could not be looked up")
        return application(environ, start_response)
    candidate = None
    # An answer longer than the cap when last made (``_too_long``) goes to Django as a page not
    # kept, reading no change key (which only a kept answer needs) before its first byte.
    if raw_session is not None and account is not None and entry != layer.too_long:
        candidate = Candidate(
            key=entry_key,
            session_key=session_key,
            session_digest=hashlib.sha256(raw_session).digest(),
            account=(account[0], account[1].version, account[1].epoch),
            csrf=cookies.get(layer.csrf_cookie),
            period=layer.figures_period(),
            watched=tuple(watched),
        )
        # A length found under another cap is no answer: the page is made and kept (or found too long) again.
        if entry is not None and not entry.startswith(_TOO_LONG):
            try:
                answer = _serve(candidate, entry, environ)
            except Exception:
                logger.exception("A kept page could not be served")
                answer = None
            if answer is not None:
                environ[SERVED_KEY] = True
                start_response(answer.status, _fresh(answer.headers))
                if environ["REQUEST_METHOD"] == "HEAD":
                    return []
                if answer.rest is None:
                    return [answer.body]
                return _HeadAndRest(answer.body, answer.rest, answer.benchmarks)
        if environ["REQUEST_METHOD"] == "GET":
            environ[ENVIRON_KEY] = candidate
    # Django's path, the session and account already read handed to the session store.
    token = layer.preloaded.set((session_key, raw_session, account))
    try:
        if candidate is None or environ["REQUEST_METHOD"] != "GET":
            return application(environ, start_response)
        started: dict[str, Any] = {}

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            started["status"], started["headers"] = status, headers
            return start_response(status, headers, exc_info) if exc_info else start_response(status, headers)

        response = application(environ, start)
        try:
            keeping = _keepable(layer, candidate, environ, started, response)
            if keeping is not None and response.streaming:
                rest_after = getattr(response, REST_ATTRIBUTE, None)
                keep_head = None
                if rest_after is not None:
                    keep_head = functools.partial(_put_head, layer, candidate.key, keeping, rest_after)
                return _Collected(
                    response,
                    functools.partial(_put, layer, candidate.key, keeping),
                    layer.max_bytes,
                    functools.partial(_too_long, layer, candidate.key),
                    keep_head=keep_head,
                    head_bytes=layer.head_bytes,
                )
            if keeping is not None:
                if len(response.content) <= layer.max_bytes:
                    _put(layer, candidate.key, keeping, response.content)
                else:
                    _too_long(layer, candidate.key)
        except Exception:
            logger.exception("A kept page could not be stored")
        return response
    finally:
        layer.preloaded.reset(token)


def _request_digest(session_key: str, environ: Mapping[str, Any]) -> str:
    """What names a kept answer: the session, where the request went and the answer it holds."""
    parts = (
        session_key,
        environ.get("wsgi.url_scheme", ""),
        environ.get("HTTP_X_FORWARDED_PROTO", ""),
        environ.get("HTTP_HOST", environ.get("SERVER_NAME", "")),
        environ.get("SCRIPT_NAME", ""),
        environ.get("PATH_INFO", ""),
        environ.get("QUERY_STRING", ""),
        environ.get("HTTP_IF_NONE_MATCH", ""),
    )
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def _serve(candidate: Candidate, stored: bytes, environ: Mapping[str, Any]) -> Kept | None:
    """The kept answer if every stamp it was made under is still the request's: one statement for
    the change keys, read last (only when everything else agrees)."""
    fmt, kept = pickle.loads(stored)  # written by ``_store`` into the platform's own cache
    if fmt != _FORMAT or not isinstance(kept, Kept):
        return None
    if (
        kept.session_digest != candidate.session_digest
        or kept.account != candidate.account
        or kept.csrf != candidate.csrf
        or kept.period != candidate.period
        or kept.watched != candidate.watched
        or any(environ.get(name) != value for name, value in kept.vary)
    ):
        return None
    if not kept.benchmarks:
        return kept  # a page of the account alone (``ACCOUNT_ONLY``): the script was its check
    from django.db import connection

    if not connection.in_atomic_block:
        # What Django's request_started does, for the connection this request uses.
        connection.close_if_unusable_or_obsolete()
    return kept if _unchanged(kept.benchmarks) else None


def _unchanged(benchmarks: tuple[tuple[int, str], ...]) -> bool:
    """Whether the change keys a kept answer was made under are still the keys now (one statement)."""
    from annotation.changes import EVERY_KEY_ID, SITE_KEY_ID

    if any(benchmark_id == EVERY_KEY_ID for benchmark_id, _ in benchmarks):
        return every_change_keys() == benchmarks
    ids = [benchmark_id for benchmark_id, _ in benchmarks if benchmark_id != SITE_KEY_ID]
    site = len(ids) < len(benchmarks)
    source = f"SELECT id FROM {_table('annotation.Benchmark')} WHERE " + (
        f"id IN ({', '.join(['%s'] * len(ids))})" if ids else "1 = 0"
    )
    return change_keys(source, ids, site=site) == benchmarks


# ``Expires`` as written last, by the second it names: (second, date), spelled once a second.
_expires: tuple[int, str] = (-1, "")


def _fresh(headers: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    """The kept headers with ``Expires`` written for now, as the never-cache headers write it (the
    date names a whole second, so it is spelled once a second)."""
    global _expires
    second = int(time.time())
    when, now = _expires
    if when != second:
        now = http_date(second)
        _expires = (second, now)
    return [(name, now if name == "Expires" else value) for name, value in headers]


def _keepable(
    layer: _Layer, candidate: Candidate, environ: Mapping[str, Any], started: Mapping[str, Any], response: Any
) -> Kept | None:
    """The answer to keep, its body left out (filled by ``_put``), if Django's answer may be kept."""
    request = candidate.request
    if candidate.benchmarks is None or request is None or not started:
        return None
    if not isinstance(response, HttpResponseBase) or response.status_code not in (200, 304):
        return None
    # A streamed answer is kept as it passes through (``_Collected``); one a server sends by its
    # own means (a file it streams itself, an asynchronous iterator) is not.
    if response.streaming and (getattr(response, "is_async", False) or not hasattr(response, "streaming_content")):
        return None
    headers = tuple((str(name), str(value)) for name, value in started["headers"])
    if response.cookies or any(name.lower() == "set-cookie" for name, _ in headers):
        return None
    session = getattr(request, "session", None)
    if session is None or session.modified or session.session_key != candidate.session_key:
        return None
    if not _messages_untouched(request):
        return None
    varied = (part.strip() for part in response.get("Vary", "").split(","))
    names = ["HTTP_" + name.upper().replace("-", "_") for name in varied if name and name.lower() != "cookie"]
    vary = tuple((name, environ.get(name)) for name in names)
    return Kept(
        session_digest=candidate.session_digest,
        account=candidate.account,
        csrf=candidate.csrf,
        period=candidate.period,
        benchmarks=candidate.benchmarks,
        watched=candidate.watched,
        vary=vary,
        status=started["status"],
        headers=headers,
    )


def _put(layer: _Layer, key: str, kept: Kept, body: bytes) -> None:
    payload = pickle.dumps((_FORMAT, dataclasses.replace(kept, body=body)), pickle.HIGHEST_PROTOCOL)
    layer.keeper.client.set(key, payload, ex=layer.seconds)


def _put_head(
    layer: _Layer,
    key: str,
    kept: Kept,
    rest_after: Callable[[int], Callable[[], Iterable[str | bytes]] | None],
    head: bytes,
    sent: int,
) -> None:
    """Keep the head of a longer download (its first ``sent`` chunks, ``head``) with the call that
    makes the chunks after them (``Resumable``), in place of the mark ``_too_long`` left."""
    rest = rest_after(sent)
    if rest is not None:
        payload = pickle.dumps((_FORMAT, dataclasses.replace(kept, body=head, rest=rest)), pickle.HIGHEST_PROTOCOL)
        layer.keeper.client.set(key, payload, ex=layer.seconds)


def _too_long(layer: _Layer, key: str) -> None:
    """Remember, for ``KEPT_PAGE_SECONDS``, that the answer of ``key`` was longer than the cap: until
    then its requests go to Django reading no change key (an answer that has become short enough
    meanwhile is kept once this is gone; one that is made under another cap reads it as no answer)."""
    layer.keeper.client.set(key, layer.too_long, ex=layer.seconds)


class _Collected:
    """A streamed answer as the server reads it, its chunks collected on the way while they come to
    at most ``max_bytes``, and ``keep`` called with the body once it ended without an error. A body
    longer than that is streamed on, holding no more than ``max_bytes`` while it is, and never kept
    whole; one the server stops reading (the reader went away) or whose chunks raise is never kept;
    ``too_long`` is called once its chunks come to more than ``max_bytes``. With ``keep_head`` (a
    ``Resumable`` download), a longer body that ended without an error calls it with its head, its
    first whole chunks while they come to at most ``head_bytes``, and how many they are."""

    def __init__(
        self,
        response: Any,
        keep: Callable[[bytes], None],
        max_bytes: int,
        too_long: Callable[[], None] | None = None,
        *,
        keep_head: Callable[[bytes, int], None] | None = None,
        head_bytes: int = 0,
    ) -> None:
        self.response = response
        self.keep = keep
        self.max_bytes = max_bytes
        self.too_long = too_long
        self.keep_head = keep_head
        self.head_bytes = min(head_bytes, max_bytes)
        # The chunks sent so far while they come to at most ``max_bytes``; None once they do not.
        self.chunks: list[bytes] | None = []
        self.size = 0
        # The head of a longer body (``keep_head``), once the body was found longer; None otherwise.
        self.head: list[bytes] | None = None

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.response:
            if self.chunks is not None:
                self.size += len(chunk)
                if self.size > self.max_bytes:
                    if self.keep_head is not None:
                        self.head = _head(self.chunks, self.head_bytes)
                    self.chunks = None
                    if self.too_long is not None:
                        try:
                            self.too_long()
                        except Exception:
                            logger.exception("A kept page's length could not be stored")
                else:
                    self.chunks.append(chunk)
            yield chunk
        if self.chunks is not None:
            body, self.chunks = b"".join(self.chunks), None
            try:
                self.keep(body)
            except Exception:
                logger.exception("A kept page could not be stored")
        elif self.head and self.keep_head is not None:
            head, self.head = self.head, None
            try:
                self.keep_head(b"".join(head), len(head))
            except Exception:
                logger.exception("A kept download's head could not be stored")

    def close(self) -> None:
        self.response.close()

    def __getattr__(self, name: str) -> Any:
        # The response's own attributes (its status, headers and cookies), for whoever serves it.
        if name == "response":
            raise AttributeError(name)
        return getattr(self.response, name)


def _head(chunks: list[bytes], most: int) -> list[bytes]:
    """The first whole ``chunks`` while they come to at most ``most`` bytes."""
    size = 0
    for count, chunk in enumerate(chunks):
        size += len(chunk)
        if size > most:
            return chunks[:count]
    return chunks


class KeptDownloadMoved(Exception):
    """The data of a download served from its kept head changed before its rest was read: the
    download is cut short (the reader's client sees it fail) rather than end with rows of other data."""


class _HeadAndRest:
    """A kept download's head, then the chunks after it as its ``Resumable``'s call makes them,
    encoded as Django encodes a streamed response's (UTF-8); as Django's streamed answer, it
    streams (``streaming``) and its ``close`` ends the rest's reading.

    The rest's first chunk is made (its statement run, its snapshot taken) before the change keys
    the head was kept under are read again: unchanged then, no change committed between the head's
    data and the rest's, which are then one download's (docs/design.md §7, "Kept pages"); moved,
    the download is cut short (``KeptDownloadMoved``)."""

    streaming = True

    def __init__(
        self, head: bytes, rest: Callable[[], Iterable[str | bytes]], benchmarks: tuple[tuple[int, str], ...]
    ) -> None:
        self.head = head
        self.rest = rest
        self.benchmarks = benchmarks
        self.chunks: Iterable[str | bytes] | None = None

    def __iter__(self) -> Iterator[bytes]:
        yield self.head
        chunks = iter(self.rest())
        self.chunks = chunks
        first = next(chunks, None)
        if self.benchmarks and not _unchanged(self.benchmarks):
            logger.warning("A download served from its kept head was cut short: its data changed meanwhile")
            raise KeptDownloadMoved("the download's data changed while it was served; download it again")
        if first is None:
            return
        for chunk in itertools.chain((first,), chunks):
            yield chunk.encode() if isinstance(chunk, str) else chunk

    def close(self) -> None:
        close = getattr(self.chunks, "close", None)
        if close is not None:
            close()


def _messages_untouched(request: Any) -> bool:
    """Whether the request neither read nor added a message (its storage never made, or empty)."""
    from django.utils.functional import empty

    storage = getattr(request, "_messages", None)
    if storage is None:
        return True
    wrapped = getattr(storage, "_wrapped", storage)
    if wrapped is empty:
        return True
    return len(wrapped) == 0
