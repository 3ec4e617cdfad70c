"""Every researcher page and the live poll at the size of the SWORDS test split and ten times it.

    python -m bench.pages [--scales 1,10] [--repeat 3] [--rebuild] [--cache-url redis://…] [--debug] [--no-warm]
                          [--pages route,route] [--steps]

Imports a SWORDS file shaped like the test split (762 targets, 45,705 candidates, 253,917 labels at
1x; bench/swords_file.py) into a benchmark per scale, kept between runs (--rebuild imports again),
then adds what a running benchmark holds: a batch of step 2, a few annotators' submitted work, a
refresh, an import job and an export job. Runs on PostgreSQL in its own database
(BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/crowdlex_bench_pages), created and
migrated if missing; the shared cache is Redis when --cache-url (or BENCH_CACHE_URL) names one, as
in production, else the process's own. The pages run with production's settings (DEBUG off, the
static files collected into a temporary STATIC_ROOT and served by whitenoise from its manifest, no
statement recorded by Django); ``--debug`` runs them with DEBUG on instead, as the development
server does (whitenoise looking at the disk on every request, each statement kept by the debug
cursor). The mode that ran is printed first.

The pages are read from the URL resolver by the researcher-pages tests' own walk (tests.routes:
every page of the rooms that is not an API, an annotator's page or a crowd's public page, each id
taken from the benchmark's rows), so a page added later is measured without a change here. Each page
is requested in this process through the WSGI application production serves (``crowdlex.wsgi``: the
kept pages' layer in front of Django's handler with its request signals; the test client's own
bookkeeping, which no server pays, is left out; the ``kept`` column counts the warm requests the
layer answered from the page kept whole, docs/design.md §7 "Kept pages", whose floor is then its
one script and one statement), with the cookies of a researcher signed in through the test client, ``--repeat``
times with the benchmark's figures cached (best of them: wall time, this process's CPU and the
statements it ran), once right after a change of the benchmark that names every target (``cold``:
what the first reader after an import or a setting pays; for the pages whose figures are warmed
after a change, ``AFTER_CHANGE_PAGES``, once the task that warms them ran, in this process, as a
worker runs it at the change's commit, and how long that task took: the figures are ready that
long after the change; ``--no-warm``: every page's first reader right after the change, as before
the task existed) and once right after one
annotator's submit (``after submit``: a HIT claimed and submitted, and the refresh it queues, run
in this process; what the first poll pays while a crowd works: wall time, this process's CPU and
statements; for ``SUBMIT_FLOOR_PAGES``, best of ``--repeat`` submits each followed by the page's
first request, and its own floor: the statements and round trips to the cache that request made,
replayed, printed as ``s-floor`` and ``s-ratio`` and against the goal of 2x). A task a measured
request queues (the agreement figures a page finds out of date,
analysis.background) is not run inside it, as the eager Celery of this process would: it runs right
after the request, in this process, as a worker runs it once the request has answered, so no
figure holds a task's time that no reader waits for. Before any page is measured, each is requested
once (``_import_views``): the first request measured does not pay the process's imports, template
compilation and URL resolver, which a serving process paid long before.

Its floor does the page's work with no framework, best of ``--repeat``: the statements the
measured request ran, by psycopg2 alone on a connection of its own, and its round trips to the
shared cache (Redis: the session's read, the kept figures, the rendered fragments, whatever it
wrote there), recorded as redis-py sent them (``bench.floor.cache_calls_recorded``: each command,
or each pipeline of them) and sent again by a redis-py client of its own, in the page's order among
the statements (``bench.floor.run_read``); a write goes to a key of the floor's own under
``bench-floor:`` (the same command and bytes, the page's entries untouched; deleted after the
run). The answers are read as redis-py reads them, not unpickled. The table prints the floor's two
parts (``sql``, ``cache``), the page's round trips to the cache beside its statements, and its
ratio to the statements alone (``sql-only``: the floor as it was before the cache's part was
replayed, for comparison; a page that moved work from SQL to kept figures looked worse against
it). ``--steps`` prints each page's work as its floor replays it. The second floor (``wsgi``) is a
bare WSGI app called in this process as the test client calls Django, which reads the request's
cookie, does the same work and answers the recorded body: what a server doing the same work with
no framework pays, so the ratio to it is Django's fixed serving cost (middleware, session,
authentication, routing, templates) over a server's (as ``bench.claim_floor`` does for the claim
cycle). With no ``--cache-url`` the cache is the process's own and the floors replay statements
only.

Goals (docs/design.md §7, docs/benchmarks.md "Researcher pages"): every page within 150 ms at the
test split's size and 300 ms at ten times it, with the same statements at both sizes; the live
poll within 20 ms; each page within 2x its floor (a FIGURE line of its own for every warm page: its
best wall over its best floor, GOAL_FLOOR_RATIO, beside the absolute ones; the run fails when one
misses).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from bench import django_setup, ensure_database, figure
from bench.floor import CacheCall, Step, WorkSplit, cache_calls_recorded, replayable, run_read, shadow_keys_delete

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/crowdlex_bench_pages"
GOAL_MS = {1.0: 150.0, 10.0: 300.0}
GOAL_LIVE_MS = 20.0
GOAL_FLOOR_RATIO = 2.0
# The pages whose figures every submit moves, by route name: the live polls, the benchmark page, the pipeline.
AFTER_SUBMIT_PAGES = {"benchmark-live", "benchmark-live?part=batches", "benchmark-detail", "pipeline-progress"}
# The pages whose figures the task run after a change warms (annotation.warm): their first request
# after it has the pages' goal too.
AFTER_CHANGE_PAGES = AFTER_SUBMIT_PAGES | {
    "analysis-statistics",
    "analysis-evaluation",
    "adjudication-queue",
    "batch-detail",
    "batch-live",
    "batch-list",
    "analysis-exports",
}
# The pages whose first request after a submit is measured ``--repeat`` times (a submit before
# each, best of them) with a floor of its own (the statements and round trips to the cache it ran,
# replayed), against at most GOAL_FLOOR_RATIO times it: the figures kept per target they read are
# brought up to date by that request (docs/design.md §7, "Incremental figures").
SUBMIT_FLOOR_PAGES = AFTER_SUBMIT_PAGES | {
    "analysis-statistics",
    "analysis-evaluation",
    "batch-detail",
    "batch-live",
    "batch-list",
}
# Annotators whose submitted work the benchmark holds, and HITs each submits.
ANNOTATORS = 5
SUBMITS_EACH = 4


def _environment(url: str, cache_url: str, *, debug: bool, static_root: str = "") -> dict[str, str]:
    """The pages' environment: production's settings, or the development server's with ``debug``."""
    # The warm after a change runs where the measurement says (``measure``), not inside the change.
    environment = {**os.environ, "DATABASE_URL": url, "CELERY_TASK_ALWAYS_EAGER": "1", "BENCHMARK_FIGURES_WARM": "0"}
    environment.pop("CELERY_BROKER_URL", None)
    if debug:
        environment["DEBUG"] = "1"
    else:
        # The test client's host; the static files read from the manifest collectstatic writes.
        environment.update(
            {"DEBUG": "0", "SECRET_KEY": "bench-only-secret-key-not-for-production", "ALLOWED_HOSTS": "testserver"}
        )
        if static_root:
            environment["STATIC_ROOT"] = static_root
    if cache_url:
        environment["CACHE_URL"] = cache_url
    else:
        environment.pop("CACHE_URL", None)
    return environment


def build(name: str, scale: float, *, rebuild: bool) -> None:
    """The benchmark ``name`` at ``scale`` times the test split, with a batch, work and jobs."""
    from django.contrib.auth.models import User
    from django.db import connection

    from analysis.exports import export_formats
    from analysis.models import ExportJob
    from annotation.models import Benchmark, ImportJob, Worker, WorkerKind
    from annotation.roles import ensure_groups
    from annotation.services import benchmark_import
    from bench.swords_file import write_swords_file
    from hits.models import HITItem
    from hits.services import assignment_claim_next, assignment_submit, hits_generate
    from hits.services.planning import HitsGenerationError
    from review.services import benchmark_refresh
    from schemes import get_scheme

    researchers, annotators = ensure_groups()
    researcher, _ = User.objects.get_or_create(username="bench-researcher", defaults={"is_staff": True})
    researcher.groups.add(researchers)
    if rebuild:
        Benchmark.objects.filter(name=name).delete()
    if Benchmark.objects.filter(name=name).exists():
        return
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / f"swords-{scale:g}x.json.gz"
        write_swords_file(path, scale=scale, seed=0)
        started = time.perf_counter()
        benchmark_import(path_or_file=str(path), benchmark_name=name, created_by=researcher)
        print(f"imported {name} in {time.perf_counter() - started:.1f} s", flush=True)
    benchmark = Benchmark.objects.get(name=name)
    benchmark.created_by = researcher
    benchmark.save(update_fields=["created_by"])
    started = time.perf_counter()
    scheme = get_scheme(benchmark)
    for step in sorted(each.number for each in scheme.steps):
        try:
            hits_generate(benchmark=benchmark, step=step, seed=1, created_by=researcher)
        except HitsGenerationError as error:
            print(f"  no batch of step {step}: {error}")
    print(f"  batches in {time.perf_counter() - started:.1f} s", flush=True)
    for number in range(ANNOTATORS):
        user, _ = User.objects.get_or_create(username=f"bench-annotator-{number}")
        user.groups.add(annotators)
        worker, _ = Worker.objects.get_or_create(
            user=user, defaults={"external_id": user.username, "kind": WorkerKind.LOCAL}
        )
        for _ in range(SUBMITS_EACH):
            assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
            if assignment is None:
                break
            items = HITItem.objects.filter(hit_id=assignment.hit_id)
            choice = scheme.page.choices[0].value if scheme.page.choices else None
            assignment_submit(assignment=assignment, answers={item.pk: choice for item in items})
    benchmark_refresh(benchmark=benchmark, full=True)
    ImportJob.objects.create(
        benchmark_name=name, benchmark=benchmark, file_name="swords.json.gz", created_by=researcher
    )
    ExportJob.objects.create(benchmark=benchmark, format=export_formats(benchmark)[0].name, created_by=researcher)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


@dataclass
class Measured:
    name: str
    url: str
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    statements: int = 0
    cold_wall: float = 0.0
    cold_cpu: float = 0.0
    cold_statements: int = 0
    warm_wall: float = float("nan")
    warm_cpu: float = float("nan")
    submit_wall: float = float("nan")
    submit_cpu: float = float("nan")
    submit_statements: int = 0
    # The floor of the first request after a submit (``SUBMIT_FLOOR_PAGES``), best of its replays.
    submit_floor: list[WorkSplit] = field(default_factory=list)
    submit_cache_calls: int = 0
    cache_calls: int = 0
    floor: list[WorkSplit] = field(default_factory=list)
    wsgi_floor: list[float] = field(default_factory=list)
    status: int = 0
    # The warm requests answered from the page kept whole (crowdlex.kept_pages), of ``wall``'s.
    kept: int = 0

    @property
    def best_ms(self) -> float:
        return 1000 * min(self.wall)

    @property
    def cpu_ms(self) -> float:
        return 1000 * min(self.cpu)

    @property
    def best_floor(self) -> WorkSplit:
        """The quickest replay of the page's work: its statements and its round trips to the cache."""
        return min(self.floor, key=lambda split: split.sql + split.cache)

    @property
    def floor_ms(self) -> float:
        return 1000 * (self.best_floor.sql + self.best_floor.cache) if self.floor else float("nan")

    @property
    def floor_sql_ms(self) -> float:
        """The statements' part of the best floor: the floor as it was before the cache's was replayed."""
        return 1000 * self.best_floor.sql if self.floor else float("nan")

    @property
    def floor_cache_ms(self) -> float:
        return 1000 * self.best_floor.cache if self.floor else float("nan")

    @property
    def submit_floor_ms(self) -> float:
        if not self.submit_floor:
            return float("nan")
        best = min(self.submit_floor, key=lambda split: split.sql + split.cache)
        return 1000 * (best.sql + best.cache)

    @property
    def submit_ratio(self) -> float:
        """The first request after a submit over its own floor."""
        return 1000 * self.submit_wall / self.submit_floor_ms if self.submit_floor else float("nan")

    @property
    def wsgi_floor_ms(self) -> float:
        return 1000 * min(self.wsgi_floor) if self.wsgi_floor else float("nan")


def _urls(name: str) -> list[tuple[str, str]]:
    """(route name, URL) of every researcher page of the benchmark, and its live polls."""
    from annotation.models import Benchmark
    from tests.routes import benchmark_ids, researcher_urls

    return list(researcher_urls(benchmark_ids(Benchmark.objects.get(name=name))).items())


def _file(route_name: str, url: str) -> bool:
    """Whether the route answers a file, not a page: their own benchmarks time them (bench.analysis_full,
    bench.downloads). A batch's HITs CSV is kept as a page is (docs/design.md §7, "Kept pages") and
    timed here with them."""
    if route_name == "batch-export":
        return False
    return route_name.endswith(("-download", "-export", "-direct", "-plot")) or "download" in url


def _floor(work: list[Step], raw: Any, cache: Any) -> WorkSplit:
    """The page's ``work`` run again with no framework, in the order the page ran it: its statements
    with psycopg2 alone, fetching every row, and its round trips to the shared cache with redis-py
    alone (``bench.floor.run_read``); the seconds each took."""
    return run_read(raw, replayable(work), cache)


def _wsgi_floor(work: list[Step], raw: Any, cache: Any, response: Any, url: str, cookies: str) -> float:
    """Seconds a bare WSGI app takes to answer ``url`` with the recorded response: it reads the
    request's session cookie, does the page's ``work`` (as ``_floor``: the statements with psycopg2,
    the cache's commands with redis-py, the session's read among them) and answers the recorded
    status, headers and body. Called in this process with an environ as the test client builds one,
    so the comparison with the page is of Django's work against none."""
    from http.cookies import SimpleCookie
    from io import BytesIO
    from wsgiref.util import setup_testing_defaults

    replay = replayable(work)
    body = response.content
    status = f"{response.status_code} {response.reason_phrase}"
    headers = [(key, value) for key, value in response.items()]

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        session = SimpleCookie(environ.get("HTTP_COOKIE", "")).get("sessionid")
        assert session is not None
        run_read(raw, replay, cache)
        start_response(status, headers)
        return [body]

    path, _, query = url.partition("?")
    environ: dict[str, Any] = {"PATH_INFO": path, "QUERY_STRING": query, "HTTP_COOKIE": cookies}
    environ["wsgi.input"] = BytesIO()
    setup_testing_defaults(environ)
    started = time.perf_counter()
    answer = b"".join(app(environ, lambda status, headers: None))
    elapsed = time.perf_counter() - started
    assert answer == body
    return elapsed


def measure(
    name: str,
    repeat: int,
    *,
    warm: bool = True,
    pages: frozenset[str] = frozenset(),
    cache_url: str = "",
    steps: bool = False,
) -> tuple[list[Measured], list[tuple[str, int]]]:
    """Each page's figures, and the (URL, status) of the pages that answered neither 200 nor, for a
    form's target, 405. ``warm``: the task that warms the figures runs after each change, before
    the cold request. ``pages``: only the pages of these route names (every page when empty).
    ``cache_url``: the shared cache (Redis) the pages read, which the floors read too with a
    client of their own. ``steps``: print each page's work as its floor replays it."""
    import psycopg2
    import redis
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client

    from annotation.models import Benchmark

    try:
        from crowdlex.kept_pages import served_application
    except ImportError:  # before pages were kept (docs/design.md §7, "Kept pages")
        from crowdlex.api_errors import ResolvingOnceHandler as served_application  # type: ignore[assignment]

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    client = Client()
    # The measured requests go through the application production serves (crowdlex.wsgi: the kept
    # pages' layer in front of Django's handler), not the test client, whose own bookkeeping
    # (signals connected for each request, the response's templates, context and client) no
    # server pays.
    handler = served_application()
    client.force_login(User.objects.get(username="bench-researcher"))
    benchmark = Benchmark.objects.get(name=name)
    database = settings.DATABASES["default"]
    raw = psycopg2.connect(
        host=database["HOST"], port=database["PORT"] or 5432, user=database["USER"], dbname=database["NAME"]
    )
    try:
        from annotation.changes import benchmark_changed
    except ImportError:  # before the figures were cached per change of the benchmark
        benchmark_changed = None  # type: ignore[assignment]
    try:
        from annotation.warm import benchmark_figures_warm
    except ImportError:  # before the figures were warmed after a change
        warm = False
    slowest_warmers: dict[str, float] = {}

    # The floors' own client of the shared cache (none when the cache is the process's own).
    cache = redis.Redis.from_url(cache_url) if cache_url else None

    results = []
    refused: list[tuple[str, int]] = []
    # The page's work in the order it ran: its statements and its round trips to the cache.
    captured: list[Step] = []

    def cookies() -> str:
        return "; ".join(f"{key}={morsel.value}" for key, morsel in client.cookies.items())

    submit = _one_submit(benchmark)

    def capture(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        captured.append((sql, params))
        return execute(sql, params, many, context)

    urls = [
        (route_name, url)
        for route_name, url in _urls(name)
        if (not pages or route_name in pages) and not _file(route_name, url)
    ]
    _import_views(client, urls)

    def timed(url: str, **headers: str) -> tuple[Any, float, float, int]:
        """The answer to one request, its wall time, this process's CPU and its statements (its
        round trips to the cache are in ``captured`` beside them); the tasks it queued run after
        it, as a worker runs them (``_tasks_after``)."""
        captured.clear()
        with _tasks_after():
            # The clock starts once the request's environ is built and the recording is in place, as
            # the floors' clocks start once theirs is (``_wsgi_floor``, ``run_read``): a server
            # builds the environ for either, and the recording is the benchmark's, not the page's.
            environ = _environ(url, cookies(), headers)
            with connection.execute_wrapper(capture), cache_calls_recorded(captured):
                started, started_cpu = time.perf_counter(), time.process_time()
                response = _served(handler, environ)
                wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
            # A streamed body, sent after the clock and outside the page's recorded work.
            response.finish()
        # The cookies the page set, kept as a browser keeps them (the CSRF cookie of a first page).
        client.cookies.update(response.cookies)
        return response, wall, cpu, _statements(captured)

    # The pages the task warms: one change, the task run in this process as a worker runs it at
    # the change's commit, then each page's first reader (as readers of several pages after one
    # change: one page's first request may read what another's computed besides).
    after_warm: dict[str, Measured] = {}
    if warm and benchmark_changed is not None:
        benchmark_changed(benchmark_id=benchmark.pk)
        started, started_cpu = time.perf_counter(), time.process_time()
        warmed = benchmark_figures_warm(benchmark=benchmark)
        warm_wall, warm_cpu = time.perf_counter() - started, time.process_time() - started_cpu
        assert not warmed.failed, f"warmers failed: {warmed.failed}"
        slowest_warmers.update(warmed.seconds)
        for route_name, url in urls:
            if route_name in AFTER_CHANGE_PAGES:
                first = after_warm[route_name] = Measured(route_name, url, warm_wall=warm_wall, warm_cpu=warm_cpu)
                _, first.cold_wall, first.cold_cpu, first.cold_statements = timed(url)

    for route_name, url in urls:
        result = after_warm.get(route_name) or Measured(route_name, url)
        if route_name in after_warm:
            with _tasks_after():
                response = client.get(url)
        else:
            if benchmark_changed is not None:
                benchmark_changed(benchmark_id=benchmark.pk)
            response, result.cold_wall, result.cold_cpu, result.cold_statements = timed(url)
        result.status = response.status_code
        if response.status_code != 200:
            print(f"  {url}: {response.status_code}, not measured")
            if response.status_code != 405:  # a form's target answers only POST: not a page
                refused.append((url, response.status_code))
            continue
        for _ in range(repeat):
            response, wall, cpu, result.statements = timed(url)
            result.wall.append(wall)
            result.cpu.append(cpu)
            result.kept += response.kept
        result.cache_calls = len(captured) - result.statements
        if steps:
            _print_steps(url, captured)
        for _ in range(repeat):
            try:
                result.floor.append(_floor(captured, raw, cache))
                if not response.streaming:
                    result.wsgi_floor.append(_wsgi_floor(captured, raw, cache, response, url, cookies()))
            except psycopg2.Error as error:
                raw.rollback()
                print(f"  {url}: floor not measured ({str(error).splitlines()[0]})")
                break
        if submit is not None and route_name in SUBMIT_FLOOR_PAGES:
            # Best of ``repeat`` submits, each followed by the page's first request, and its floor.
            after_submit: list[Step] = []
            for _ in range(repeat):
                if not submit():
                    break
                _, wall, cpu, statements = timed(url)
                if not wall >= result.submit_wall:  # the first, or quicker
                    result.submit_wall, result.submit_cpu, result.submit_statements = wall, cpu, statements
                    after_submit = list(captured)
            if result.submit_wall == result.submit_wall:
                if steps:
                    _print_steps(f"{url} (first after a submit)", after_submit)
                result.submit_floor = [_floor(after_submit, raw, cache) for _ in range(repeat)]
                result.submit_cache_calls = len(after_submit) - _statements(after_submit)
        elif submit is not None and submit():
            _, result.submit_wall, result.submit_cpu, result.submit_statements = timed(url)
        results.append(result)
        if "live" in route_name:
            # The poll as the page's script sends it once it holds the figures: with their ETag.
            tag = response.get("ETag")
            if tag:
                polled = Measured(f"{route_name} (304)", f"{url} (304)")
                for _ in range(repeat):
                    answer, wall, cpu, polled.statements = timed(url, **{"If-None-Match": tag})
                    polled.wall.append(wall)
                    polled.cpu.append(cpu)
                    polled.status = answer.status_code
                    polled.kept += answer.kept
                polled.cache_calls = len(captured) - polled.statements
                polled.floor = [_floor(list(captured), raw, cache) for _ in range(repeat)]
                polled.wsgi_floor = [
                    _wsgi_floor(list(captured), raw, cache, answer, url, cookies()) for _ in range(repeat)
                ]
                results.append(polled)
    raw.close()
    if cache is not None:
        shadow_keys_delete(cache)
        cache.close()
    if slowest_warmers:
        print(
            "  warm task, each warmer: "
            + ", ".join(f"{warmer} {1000 * seconds:.0f} ms" for warmer, seconds in slowest_warmers.items())
        )
    return results, refused


def _print_steps(url: str, work: list[Step]) -> None:
    """``url``'s work, one line a step: each statement's start, each round trip's commands and keys."""
    print(f"  {url}: {_statements(work)} statements, {len(work) - _statements(work)} round trips to the cache")
    for step in work:
        if isinstance(step, CacheCall):
            commands = "; ".join(
                " ".join([name, *(str(arg)[:70] for arg in args[1:3])])
                for name, (args, _) in zip(step.names, step.commands, strict=True)
            )
            print(f"    cache {'pipeline ' if step.pipeline else ''}{commands}")
        else:
            print(f"    sql   {' '.join(step[0].split())[:150]}")


@dataclass
class Served:
    """One answer as the server got it: from Django (``response``) or, for a page kept whole, the
    kept pages' layer's plain WSGI answer (status line, headers, body)."""

    status: str
    headers: list[tuple[str, str]]
    body: bytes
    streaming: bool
    kept: bool
    response: Any = None
    # A streamed body not read yet (``finish``).
    unread: Any = None

    def finish(self) -> None:
        """Read a streamed body to its end and close it, as a server sends it."""
        answer, self.unread = self.unread, None
        if answer is None:
            return
        try:
            self.body = b"".join(answer)
        finally:
            answer.close()

    @property
    def status_code(self) -> int:
        return int(self.status.split(" ", 1)[0])

    @property
    def reason_phrase(self) -> str:
        return self.status.split(" ", 1)[1] if " " in self.status else ""

    @property
    def content(self) -> bytes:
        return self.body

    @property
    def cookies(self) -> Any:
        from http.cookies import SimpleCookie

        if self.response is not None:
            return self.response.cookies
        found: SimpleCookie = SimpleCookie()
        for name, value in self.headers:
            if name.lower() == "set-cookie":
                found.load(value)
        return found

    def items(self) -> list[tuple[str, str]]:
        """The headers, those of the cookies aside (as a Django response's ``items``)."""
        return [(name, value) for name, value in self.headers if name.lower() != "set-cookie"]

    def get(self, name: str, default: Any = None) -> Any:
        return next((value for key, value in self.headers if key.lower() == name.lower()), default)


def _environ(url: str, cookies: str, headers: dict[str, str]) -> dict[str, Any]:
    """The WSGI environ of a GET of ``url`` with these cookies and headers, as a server builds it."""
    from io import BytesIO
    from wsgiref.util import setup_testing_defaults

    path, _, query = url.partition("?")
    environ: dict[str, Any] = {"PATH_INFO": path, "QUERY_STRING": query, "HTTP_COOKIE": cookies}
    environ.update({"HTTP_" + name.upper().replace("-", "_"): value for name, value in headers.items()})
    environ.update({"HTTP_HOST": "testserver", "SERVER_NAME": "testserver", "wsgi.input": BytesIO()})
    setup_testing_defaults(environ)
    return environ


def _served(handler: Any, environ: dict[str, Any]) -> Served:
    """``handler``'s answer to the GET of ``environ`` (``_environ``), its body read and
    the answer closed, as a WSGI server does with it (Django's request signals included); a page
    kept whole is answered by the kept pages' layer without Django. A streamed answer (a CSV
    download Django makes) is timed to its headers, as before: the whole download is its own
    benchmark's (``bench.analysis_full``), not a page's; its body is read after the clock by
    ``Served.finish``, as a server sends it, so that the layer keeps a small one (a kept one is one
    body, timed whole)."""
    started: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        started.update(status=status, headers=list(headers))

    answer = handler(environ, start_response)
    streaming = bool(getattr(answer, "streaming", False))
    body = b""
    if not streaming:
        try:
            body = b"".join(answer)
        finally:
            close = getattr(answer, "close", None)
            if close is not None:
                close()
    response = answer if hasattr(answer, "status_code") else None
    kept = bool(environ.get("crowdlex.kept_page.served"))
    served = Served(started["status"], started["headers"], body, streaming, kept, response)
    served.unread = answer if streaming else None
    return served


def _statements(work: list[Step]) -> int:
    """How many of a page's steps are statements (the others are round trips to the cache)."""
    return sum(1 for step in work if not isinstance(step, CacheCall))


@contextmanager
def _tasks_after() -> Iterator[None]:
    """The Celery tasks queued inside the block are held and run when it ends, in this process, one
    after another: as a worker runs them once the request that queued them has answered. (The
    pages run with ``CELERY_TASK_ALWAYS_EAGER``, which would run them inside the request: its time
    would be the task's, which no reader waits for.)"""
    from celery import uuid
    from celery.app.task import Task

    held: list[tuple[Any, Any, Any]] = []
    queue = Task.apply_async

    def hold(task: Any, args: Any = None, kwargs: Any = None, **options: Any) -> Any:
        held.append((task, args or (), kwargs or {}))
        return task.AsyncResult(uuid())

    Task.apply_async = hold  # type: ignore[method-assign]
    try:
        yield
    finally:
        Task.apply_async = queue  # type: ignore[method-assign]
    for task, args, kwargs in held:
        task.apply(args, kwargs, throw=True)


def _import_views(client: Any, urls: list[tuple[str, str]]) -> None:
    """One request of each page, its answer unread and the tasks it queues run after it, before any
    is measured: a process serving pages has long loaded its middleware, compiled its templates,
    populated the URL resolver's reverse lookups and imported what each view imports when first
    called. Else the first page measured pays them (about 2 s on a loaded machine, more than any
    page's own work) and a run of one page (``--pages``) measures the process's start."""
    for _, url in urls:
        with _tasks_after():
            client.get(url)


def _one_submit(benchmark: Any) -> Any:
    """A function that has one annotator claim and submit a HIT of the benchmark, as a crowd does
    (False once no HIT is left for them), or None when the benchmark has no annotator."""
    from annotation.models import Worker
    from hits.models import HITItem
    from hits.services import assignment_claim_next, assignment_submit
    from schemes import get_scheme

    worker = Worker.objects.filter(external_id=f"bench-annotator-{ANNOTATORS - 1}").first()
    if worker is None:
        return None
    scheme = get_scheme(benchmark)
    choice = scheme.page.choices[0].value if scheme.page.choices else None

    def submit() -> bool:
        assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
        if assignment is None:
            return False
        items = HITItem.objects.filter(hit_id=assignment.hit_id)
        assignment_submit(assignment=assignment, answers={item.pk: choice for item in items})
        return True

    return submit


def _report(scale: float, results: list[Measured]) -> bool:
    goal = GOAL_MS.get(scale, 300.0)
    warmed = [each for each in results if each.warm_wall == each.warm_wall]
    cold = "after a change, the warm task run first" if warmed else "after a change, no warm task"
    print(
        f"\n{scale:g} x the SWORDS test split (best of the warm runs; cold: the first request {cold}; "
        "after submit: the first request after one annotator's submit)"
    )
    # floor: the page's statements and its round trips to the cache replayed (sql + cache, in ms);
    # sql-only: the ratio to the statements' part alone, the floor before the cache was replayed;
    # s-floor, s-ratio: the first request after a submit's own floor, and its ratio to it;
    # kept: the warm requests answered from the page kept whole, of those made.
    print(
        f"  {'page':<44} {'wall':>8} {'CPU':>8} {'stmts':>5} {'cache':>5} {'cold':>8} {'stmts':>5} "
        f"{'submit':>8} {'CPU':>8} {'stmts':>5} {'floor':>8} {'sql':>6} {'cache':>6} {'ratio':>6} "
        f"{'wsgi':>8} {'ratio':>6} {'sql-only':>8} {'s-floor':>8} {'s-ratio':>7} {'kept':>5}"
    )
    for each in results:
        ratio = each.best_ms / each.floor_ms if each.floor else float("nan")
        sql_ratio = each.best_ms / each.floor_sql_ms if each.floor and each.floor_sql_ms > 0 else float("nan")
        wsgi_ratio = each.best_ms / each.wsgi_floor_ms if each.wsgi_floor else float("nan")
        print(
            f"  {each.url[:44]:<44} {each.best_ms:7.1f}ms {each.cpu_ms:6.1f}ms {each.statements:5d} "
            f"{each.cache_calls:5d} {1000 * each.cold_wall:7.1f}ms {each.cold_statements:5d} "
            f"{1000 * each.submit_wall:7.1f}ms {1000 * each.submit_cpu:6.1f}ms {each.submit_statements:5d} "
            f"{each.floor_ms:7.2f}ms {each.floor_sql_ms:6.2f} {each.floor_cache_ms:6.2f} {ratio:6.1f} "
            f"{each.wsgi_floor_ms:7.2f}ms {wsgi_ratio:6.1f} {sql_ratio:8.1f} "
            f"{each.submit_floor_ms:6.2f}ms {each.submit_ratio:7.1f} {each.kept:>3d}/{len(each.wall)}"
        )
    colds = [each for each in results if "(304)" not in each.url]
    if colds:
        slowest = max(colds, key=lambda each: each.cold_wall)
        print(
            f"  first request after a change ({cold}): "
            f"median {1000 * statistics.median(each.cold_wall for each in colds):.1f} ms, "
            f"slowest {slowest.url} at {1000 * slowest.cold_wall:.1f} ms"
        )
    if warmed:
        walls = [each.warm_wall for each in warmed]
        cpus = [each.warm_cpu for each in warmed]
        print(
            f"  warm task after a change (figures ready this long after it): median {statistics.median(walls):.2f} s, "
            f"worst {max(walls):.2f} s; this process's CPU median {statistics.median(cpus):.2f} s"
        )
    submitted = [each for each in results if each.submit_wall == each.submit_wall]
    if submitted:
        slowest = max(submitted, key=lambda each: each.submit_wall)
        print(
            f"  slowest page after one submit: {slowest.url} at {1000 * slowest.submit_wall:.1f} ms "
            f"({1000 * slowest.submit_cpu:.1f} ms of this process's CPU)"
        )
    floored = [each for each in results if each.submit_floor]
    if floored:
        # The first request after a submit against its own floor (docs/design.md §7, "Incremental figures").
        for each in floored:
            print(
                f"  first after a submit, {each.url}: {1000 * each.submit_wall:.1f} ms, "
                f"CPU {1000 * each.submit_cpu:.1f} ms, {each.submit_statements} statements, "
                f"{each.submit_cache_calls} round trips to the cache, "
                f"floor {each.submit_floor_ms:.2f} ms, {each.submit_ratio:.1f} x its floor"
            )
        ratios = [each.submit_ratio for each in floored]
        print(f"  ratio to the floor after one submit: median {statistics.median(ratios):.1f}, worst {max(ratios):.1f}")
    met = True
    for each in results:
        live = "live" in each.name
        met &= figure(f"{each.url} at {scale:g}x (best wall)", each.best_ms, "ms", goal=GOAL_LIVE_MS if live else goal)
    for each in results:
        if each.floor:
            # Each warm page against the same work with no framework (docs/benchmarks.md, "Researcher pages").
            name = f"{each.url} at {scale:g}x (best wall) against its floor"
            met &= figure(name, each.best_ms / each.floor_ms, "x", goal=GOAL_FLOOR_RATIO)
    for each in results:
        if each.name in AFTER_SUBMIT_PAGES and each.submit_wall == each.submit_wall:
            # The pages a crowd's work keeps changing: their first request after a submit has the
            # pages' goal too (docs/design.md §7, "Incremental figures").
            name = f"{each.url} at {scale:g}x (first after one submit)"
            met &= figure(name, 1000 * each.submit_wall, "ms", goal=goal)
    for each in floored:
        name = f"{each.url} at {scale:g}x (first after one submit) against its floor"
        met &= figure(name, each.submit_ratio, "x", goal=GOAL_FLOOR_RATIO)
    for each in results:
        if each.name in AFTER_CHANGE_PAGES and "(304)" not in each.url:
            print(
                f"  first after a change, {each.url}: {1000 * each.cold_wall:.1f} ms, "
                f"CPU {1000 * each.cold_cpu:.1f} ms, {each.cold_statements} statements, "
                f"{1000 * each.cold_wall / each.floor_ms:.1f} x its floor"
            )
    for each in warmed:
        if each.name in AFTER_CHANGE_PAGES:
            name = f"{each.url} at {scale:g}x (first after a change, warm task run)"
            met &= figure(name, 1000 * each.cold_wall, "ms", goal=goal)
    slowest = max(results, key=lambda each: each.best_ms)
    print(f"  slowest page: {slowest.url} at {slowest.best_ms:.1f} ms")
    # kept: the warm requests answered from the page kept whole (docs/design.md §7, "Kept pages").
    kept = [each for each in results if each.kept]
    print(f"  pages served kept (a warm request answered without Django): {len(kept)} of {len(results)}")
    within = [each for each in results if each.floor and each.best_ms <= GOAL_FLOOR_RATIO * each.floor_ms]
    print(f"  pages within {GOAL_FLOOR_RATIO:g}x their floor: {len(within)} of {len([e for e in results if e.floor])}")
    ratios = [each.best_ms / each.floor_ms for each in results if each.floor]
    print(f"  ratio to the floor: median {statistics.median(ratios):.1f}, worst {max(ratios):.1f}")
    ratios = [each.best_ms / each.floor_sql_ms for each in results if each.floor and each.floor_sql_ms > 0]
    if ratios:  # none when every page measured runs no statement (the people's import alone)
        print(
            f"  ratio to the floor's statements alone (the cache's commands left out, as the floor was "
            f"before): median {statistics.median(ratios):.1f}, worst {max(ratios):.1f}"
        )
    calls = [each.cache_calls for each in results]
    print(f"  round trips to the cache per page: median {statistics.median(calls):g}, most {max(calls)}")
    # This process's CPU over the floor: what the page costs here, less the waits for a CPU a loaded
    # machine adds to the wall time (the database's own time is in the floor, not in this CPU).
    ratios = [each.cpu_ms / each.floor_ms for each in results if each.floor and each.floor_ms > 0]
    print(f"  CPU to the floor: median {statistics.median(ratios):.1f}, worst {max(ratios):.1f}")
    ratios = [each.best_ms / each.wsgi_floor_ms for each in results if each.wsgi_floor]
    if ratios:
        print(f"  ratio to the WSGI floor: median {statistics.median(ratios):.1f}, worst {max(ratios):.1f}")
    return met


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.pages", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scales", default="1,10", help="sizes, times the SWORDS test split (default 1,10)")
    parser.add_argument("--repeat", type=int, default=3, help="warm requests per page (default 3)")
    parser.add_argument("--rebuild", action="store_true", help="import the benchmarks again")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL))
    parser.add_argument("--cache-url", default=os.environ.get("BENCH_CACHE_URL", ""))
    parser.add_argument(
        "--debug", action="store_true", help="DEBUG on, as the development server runs (default: production's settings)"
    )
    parser.add_argument(
        "--no-warm",
        action="store_true",
        help="cold: the first request right after the change, without running the warm task first (as before it)",
    )
    parser.add_argument(
        "--pages", default="", help="only the pages of these route names, comma-separated (default: every page)"
    )
    parser.add_argument("--steps", action="store_true", help="print each page's statements and cache commands")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    scales = [float(value) for value in args.scales.split(",")]

    if args.measure:
        # The parent process set STATIC_ROOT (production's mode) in the environment it passed down.
        static_root = os.environ.get("STATIC_ROOT", "")
        os.environ.update(_environment(args.database_url, args.cache_url, debug=args.debug, static_root=static_root))
        django_setup()
        from django.conf import settings

        scale = float(args.measure)
        name = f"bench-pages-{scale:g}x".replace(".", "-")
        build(name, scale, rebuild=args.rebuild)
        pages = frozenset(filter(None, args.pages.split(",")))
        results, refused = measure(
            name, args.repeat, warm=not args.no_warm, pages=pages, cache_url=args.cache_url, steps=args.steps
        )
        counts = _counts(name)
        print(f"\n{name}: " + ", ".join(f"{key} {value:,}" for key, value in counts.items()))
        print(f"mode: {'debug (DEBUG on)' if settings.DEBUG else 'production (DEBUG off)'}")
        measured = len({each.url for each in results if "(304)" not in each.url})
        print(f"  {measured} pages answered 200")
        if refused:
            # A page of an id the benchmark lacks (404) or one that sends elsewhere (302) answers the
            # same in either mode; an error (5xx) fails the run.
            print("  answered otherwise: " + ", ".join(f"{url} ({status})" for url, status in refused))
        met = _report(scale, results)
        return 0 if met and not any(status >= 500 for _, status in refused) else 1

    ensure_database(args.database_url)
    with tempfile.TemporaryDirectory(prefix="bench-pages-static-") as static_root:
        environment = _environment(args.database_url, args.cache_url, debug=args.debug, static_root=static_root)
        subprocess.run([sys.executable, "manage.py", "migrate", "--verbosity", "0"], env=environment, check=True)
        if not args.debug:
            collect = [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"]
            subprocess.run(collect, env=environment, check=True)
        mode = "debug (DEBUG on)" if args.debug else "production (DEBUG off, static files from their manifest)"
        print(f"mode: {mode}", flush=True)
        print(f"database {urlparse(args.database_url).path.lstrip('/')}, load average {os.getloadavg()}", flush=True)
        met = True
        for scale in scales:
            # A process per size: the larger one's memory and caches do not weigh on the smaller's.
            command = [sys.executable, "-m", "bench.pages", "--measure", f"{scale:g}", "--repeat", str(args.repeat)]
            command += ["--database-url", args.database_url, "--cache-url", args.cache_url]
            command += ["--rebuild"] if args.rebuild else []
            command += ["--debug"] if args.debug else []
            command += ["--no-warm"] if args.no_warm else []
            command += ["--pages", args.pages] if args.pages else []
            command += ["--steps"] if args.steps else []
            completed = subprocess.run(command, env=environment)
            met &= completed.returncode == 0
    print(f"\nload average after measuring: {os.getloadavg()}")
    return 0 if met else 1


def _counts(name: str) -> dict[str, int]:
    from annotation.models import Benchmark, Candidate, Label, Target

    benchmark = Benchmark.objects.get(name=name)
    return {
        "targets": Target.objects.filter(benchmark=benchmark).count(),
        "candidates": Candidate.objects.filter(target__benchmark=benchmark).count(),
        "labels": Label.objects.filter(candidate__target__benchmark=benchmark).count(),
    }


if __name__ == "__main__":
    raise SystemExit(main())
