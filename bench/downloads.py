"""Whole CSV downloads at the size of the SWORDS test split: every data browser table (unfiltered, and one
filtered and sorted view of each), the batch's HITs CSV and the exports of rows a researcher downloads
from the exports page (its CSV tables and the answers' JSON Lines), each body read to its last byte,
against its floor.

    python -m bench downloads [--repeat 3] [--only labels,hits-csv] [--no-exports] [--database-url URL]

Runs on PostgreSQL, on the benchmark ``bench.pages`` builds at 1x (762 targets, 45,705 candidates,
253,917 labels, a batch of step 2, a few annotators' work; ``bench.pages.build``, kept between runs)
in its own database (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/downloads_bench),
created and migrated if missing. The downloads run with production's settings (DEBUG off, no
statement kept by Django), through the WSGI handler production serves, in this process, with the
cookies of a researcher signed in, as ``bench.pages`` requests its pages: what a server pays to
answer one, less the network.

Each download is printed with its wall time and this process's CPU (best of ``--repeat``), the
statements it ran, the rows and bytes of the CSV and its rate, beside its floor: the same
statements run by psycopg2 alone on a connection of its own, each one's rows fetched as the
download fetched them (a statement Django read through a server-side cursor is read through one,
WITH HOLD as Django's in autocommit, ``fetchmany`` of the same size) and written with Python's
``csv`` module (``writerows`` of each fetch into a buffer that is then dropped): the least work
that turns those rows into CSV bytes. The ratio of the download to its floor (wall time, and CPU:
this process's against the floor's client's) is a FIGURE against 2x (docs/benchmarks.md,
"Whole CSV downloads") for each download whose floor takes 0.1 s or more; below that the ratio is
the request's fixed cost (session, access check, response), which ``bench.pages`` measures, and is
printed only. The machine is shared: the CPU ratio is the steadier figure.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from bench import django_setup, ensure_database, figure
from bench.floor import _executed, _prepare, machine, replayable

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/downloads_bench"
NAME = "bench-pages-1x"
GOAL_RATIO = 2.0
# A download whose floor takes less than this is the request's fixed cost (the session, the access
# check, the response) more than its rows': printed, with no FIGURE (bench.pages measures that cost).
FIGURE_FLOOR_SECONDS = 0.1
# One filtered and sorted view of each table, beside the whole table.
FILTERED = {
    "items": "pos=verb&sort=candidates&dir=desc",
    "candidates": "q=e&sort=score&dir=desc",
    "labels": "counted=yes&sort=candidate",
    "hits": "q=a&sort=done&dir=desc",
    "workers": "sort=labels&dir=desc",
}


@dataclass
class Statement:
    sql: str
    params: Any
    # The fetch size of a server-side cursor (Django's iterator), 0 for a plain one.
    itersize: int = 0


@dataclass
class Measured:
    name: str
    url: str
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    floor_wall: list[float] = field(default_factory=list)
    floor_cpu: list[float] = field(default_factory=list)
    statements: int = 0
    # Rows the floor wrote: those its server-side cursors fetched.
    floor_rows: int = 0
    rows: int = 0
    size: int = 0
    status: int = 0

    def ratio(self) -> float:
        return min(self.wall) / min(self.floor_wall) if min(self.floor_wall) > 0 else float("inf")

    def cpu_ratio(self) -> float:
        return min(self.cpu) / min(self.floor_cpu) if min(self.floor_cpu) > 0 else float("inf")


def _urls(benchmark: Any, *, exports: bool) -> list[tuple[str, str]]:
    """(name, URL) of every download measured."""
    from django.urls import reverse

    from analysis.browser import TABLES
    from analysis.exports import export_formats
    from hits.models import Batch

    urls = []
    for table in TABLES:
        base = reverse(f"data-{table}-csv", args=[benchmark.name])
        urls += [(table, base), (f"{table} ({FILTERED[table]})", f"{base}?{FILTERED[table]}")]
    for batch in Batch.objects.filter(benchmark=benchmark).order_by("pk"):
        urls.append((f"hits-csv (batch {batch.pk})", reverse("batch-export", args=[batch.pk])))
    if exports:
        for chosen in export_formats(benchmark):
            # The exports of rows: the CSV tables and the answers' JSON Lines.
            if chosen.suffix in (".csv", ".jsonl"):
                urls.append((chosen.name, reverse("analysis-export-direct", args=[benchmark.name, chosen.name])))
    return urls


@contextmanager
def _recorded(work: list[Statement]) -> Iterator[None]:
    """Each statement Django runs inside the block, with its server-side cursor's fetch size."""
    from django.db import connection

    def record(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        raw = getattr(context["cursor"], "cursor", None)
        named = getattr(raw, "name", None)
        work.append(Statement(sql, params, getattr(raw, "itersize", 0) if named else 0))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        yield


def _download(handler: Any, url: str, cookies: str) -> tuple[int, bytes]:
    """The status and whole body of a GET of ``url``, read as a WSGI server reads it, the response closed."""
    from wsgiref.util import setup_testing_defaults

    path, _, query = url.partition("?")
    environ: dict[str, Any] = {"PATH_INFO": path, "QUERY_STRING": query, "HTTP_COOKIE": cookies}
    environ.update({"HTTP_HOST": "testserver", "SERVER_NAME": "testserver", "wsgi.input": io.BytesIO()})
    setup_testing_defaults(environ)
    response = handler(environ, lambda status, headers, exc_info=None: None)
    try:
        body = b"".join(response)
    finally:
        response.close()
    return response.status_code, body


def floor(raw: Any, work: list[Statement]) -> tuple[float, float, int]:
    """Seconds (wall, this process's CPU) to run ``work`` by psycopg2 alone on ``raw`` (autocommit), a
    server-side cursor's rows fetched as Django fetched them and every row written as CSV into a
    dropped buffer; and the rows written."""
    # A statement the platform prepared on Django's connection (the session's, the access check's) is
    # prepared once on ``raw`` too, before the clock starts, as the platform holds it prepared.
    replay = replayable([(statement.sql, statement.params) for statement in work])
    kept = {step[0] for step in replay if isinstance(step, tuple)}
    work = [statement for statement in work if statement.sql in kept]
    _prepare(raw, [(statement.sql, statement.params) for statement in work if _executed(statement.sql)])
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    rows = 0
    started, started_cpu = time.perf_counter(), time.process_time()
    for number, statement in enumerate(work):
        if statement.itersize:
            cursor = raw.cursor(name=f"floor_{number}", withhold=True)
            cursor.itersize = statement.itersize
            cursor.execute(statement.sql, statement.params)
            while fetched := cursor.fetchmany(statement.itersize):
                writer.writerows(fetched)
                rows += len(fetched)
                buffer.seek(0)
                buffer.truncate()
        else:
            cursor = raw.cursor()
            cursor.execute(statement.sql, statement.params)
            if cursor.description is not None:
                writer.writerows(cursor.fetchall())
                buffer.seek(0)
                buffer.truncate()
        cursor.close()
    return time.perf_counter() - started, time.process_time() - started_cpu, rows


def measure(
    repeat: int,
    *,
    only: frozenset[str] = frozenset(),
    exports: bool = True,
    name: str = NAME,
    username: str = "bench-researcher",
) -> list[Measured]:
    """Each download of the benchmark ``name``, as ``username`` downloads it, beside its floor; a line
    printed for each as it is measured."""
    import psycopg2
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.test import Client

    from annotation.models import Benchmark
    from crowdlex.api_errors import ResolvingOnceHandler

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    client = Client()
    client.force_login(User.objects.get(username=username))
    cookies = "; ".join(f"{key}={morsel.value}" for key, morsel in client.cookies.items())
    handler = ResolvingOnceHandler()
    benchmark = Benchmark.objects.get(name=name)
    database = settings.DATABASES["default"]
    raw = psycopg2.connect(
        host=database["HOST"], port=database["PORT"] or 5432, user=database["USER"], dbname=database["NAME"]
    )
    raw.autocommit = True
    results = []
    for download, url in _urls(benchmark, exports=exports):
        if only and download.split(" ")[0] not in only:
            continue
        result = Measured(download, url)
        _download(handler, url, cookies)  # the view's imports and the benchmark's cached figures, once
        for _ in range(repeat):
            work: list[Statement] = []
            with _recorded(work):
                started, started_cpu = time.perf_counter(), time.process_time()
                result.status, body = _download(handler, url, cookies)
                result.wall.append(time.perf_counter() - started)
                result.cpu.append(time.process_time() - started_cpu)
            result.statements, result.size = len(work), len(body)
            result.rows = body.count(b"\n")
            wall, cpu, result.floor_rows = floor(raw, work)
            result.floor_wall.append(wall)
            result.floor_cpu.append(cpu)
        print(
            f"  {download[:48]:<48} {min(result.wall):7.2f}s {min(result.cpu):7.2f}s {result.statements:5d} "
            f"{result.rows:8d} {result.size / 1e6:7.1f}MB {result.size / 1e6 / min(result.wall):6.1f}MB/s "
            f"{min(result.floor_wall):7.2f}s {min(result.floor_cpu):7.2f}s {result.ratio():6.2f} "
            f"{result.cpu_ratio():6.2f}",
            flush=True,
        )
        results.append(result)
    raw.close()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.downloads", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3, help="downloads of each (best of them; default 3)")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL))
    parser.add_argument(
        "--only", default="", help="only these downloads, comma-separated (labels, hits-csv, labels-csv, ...)"
    )
    parser.add_argument("--no-exports", action="store_true", help="leave out the CSV export formats")
    args = parser.parse_args(argv)

    from bench.pages import _environment, build

    ensure_database(args.database_url)
    os.environ.update(_environment(args.database_url, "", debug=False))
    django_setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    build(NAME, 1.0, rebuild=False)
    with connection.cursor() as cursor:
        print(f"database {urlparse(args.database_url).path.lstrip('/')}; {machine(cursor)}", flush=True)
    print(
        f"  {'download':<48} {'wall':>8} {'CPU':>8} {'stmts':>5} {'rows':>8} {'size':>9} {'rate':>8} "
        f"{'floor':>8} {'CPU':>8} {'ratio':>6} {'CPU':>6}"
    )
    results = measure(args.repeat, only=frozenset(filter(None, args.only.split(","))), exports=not args.no_exports)
    met = True
    for result in results:
        if result.status != 200:
            print(f"  {result.url}: answered {result.status}")
            met = False
            continue
        if min(result.floor_wall) < FIGURE_FLOOR_SECONDS:
            print(f"  {result.name}: floor under {FIGURE_FLOOR_SECONDS:g} s, its ratio is the request's fixed cost")
            continue
        met &= figure(f"download {result.name} against its floor (wall)", result.ratio(), "x", goal=GOAL_RATIO)
        met &= figure(f"download {result.name} against its floor (CPU)", result.cpu_ratio(), "x", goal=GOAL_RATIO)
    print(f"load average after measuring: {os.getloadavg()}")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
