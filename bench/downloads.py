"""Whole downloads at the size of the SWORDS test split, for every scheme: on the SWORDS benchmark every
data browser table's CSV (unfiltered, and one filtered and sorted view of each) and the batch's HITs
CSV; on each scheme's benchmark the exports a researcher downloads from the exports page (the CSV
tables of rows, the answers' CSV and JSON Lines, and the scheme's own formats: the SWORDS JSON, the
ProLex CSV, Smart Word Suggestions' JSON and its suggestions' CSV, the TSAR-2022 gold TSV; all but
the statistics document and the dataset folder's zip), each body read to its last byte, against its
floor.

    python -m bench downloads [--repeat 3] [--schemes swords,prolex,sws,tsar] [--only labels,hits-csv]
                              [--no-exports] [--database-url URL]

Runs on PostgreSQL in its own database (BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/downloads_bench), created and migrated if missing, on a benchmark
per scheme (``--schemes``, default all), each built once and kept between runs (a database of
its own builds them again), seeded and deterministic:

- SWORDS: the benchmark ``bench.pages`` builds at 1x (762 targets, 45,705 candidates, 253,917
  labels, a batch of step 2, a few annotators' work; ``bench.pages.build``).
- ProLex, Smart Word Suggestions, TSAR-2022 (``build_scheme``): a released file of the scheme's
  own format, of the test split's size in judgements (``bench.scheme_files``: 762 ProLex targets
  of 45,705 substitutes and 253,917 experts' judgments; 4,500 Smart Word Suggestions sentences of
  about 277,000 votes; 10,157 TSAR instances of 25 suggestions each), imported by the platform's
  import (``benchmark_import``), then a batch of the scheme's step (``hits_generate``; ProLex's
  experts judge the substitutes its file names unjudged) and the same few annotators' work as the
  SWORDS benchmark's, claimed and submitted through the platform's services.

The downloads run with production's settings (DEBUG off, no statement kept by Django), through the
WSGI handler production serves, in this process, with the cookies of a researcher signed in, as
``bench.pages`` requests its pages: what a server pays to answer one, less the network.

Each download is printed with its wall time and this process's CPU (best of ``--repeat``), the
statements it ran, the lines and bytes of its body and its rate, beside its floor. The floor is made
the same way for every download, whatever its format: the same statements run by psycopg2 alone on
a connection of its own, each one's rows fetched as the download fetched them (a statement Django
read through a server-side cursor is read through one, WITH HOLD as Django's in autocommit,
``fetchmany`` of the same size) and written with Python's ``csv`` module (``writerows`` of each
fetch into a buffer that is then dropped): the least work that turns those rows into text. A JSON,
JSON Lines or TSV format is held to the same floor as a CSV table: writing its rows as CSV is no
more work than any text the format writes of them. The ratio of the download to its floor (wall
time, and CPU: this process's against the floor's client's) is a FIGURE against 2x
(docs/benchmarks.md, "Whole CSV downloads", "Every scheme's exports against their floor") for each
download whose floor takes 0.1 s or more; below that the ratio is the request's fixed cost
(session, access check, response), which ``bench.pages`` measures, and is printed only. The machine
is shared: the CPU ratio is the steadier figure.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import re
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from bench import django_setup, ensure_database, figure
from bench.floor import _executed, _prepare, machine, replayable

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/downloads_bench"
NAME = "bench-pages-1x"
GOAL_RATIO = 2.0
# Every scheme a benchmark may take, each measured on a benchmark of its own (``build_scheme``).
SCHEMES = ("swords", "prolex", "sws", "tsar")
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


def scheme_answer(scheme: Any, item: Any, number: int) -> Any:
    """An answer of annotator ``number`` to ``item`` that ``scheme`` accepts, as its page posts one: a
    choice; for Smart Word Suggestions a word of the sentence marked with suggestions; for lexical
    simplification a simpler word (annotators agree on some)."""
    if scheme.page.choices:
        return scheme.page.choices[number % len(scheme.page.choices)].value
    if scheme.name == "sws":
        # Three words marked (the scheme's least), the annotators sharing some of them.
        words = [(found.start(), found.group()) for found in re.finditer(r"\w+", item.text)]
        marked = [words[(number + step * 3) % len(words)] for step in range(3)]
        return {
            "targets": [
                {
                    "start": start,
                    "end": start + len(word),
                    "suggestions": f"{word}x; better {number % 2}",
                    "type": "refine-usage" if step % 2 else "diversify-expression",
                }
                for step, (start, word) in enumerate(sorted(set(marked)))
            ],
            "discard": "",
        }
    return {"substitute": f"simple{number % 2}", "none": False}


def build_scheme(scheme_name: str, *, scale: float = 1.0) -> str:
    """The benchmark of ``scheme_name`` at the test split's size (``bench.scheme_files``): its released
    file imported, a batch of its step and the same few annotators' submitted work as ``bench.pages``
    gives the SWORDS one, kept between runs; returns its name."""
    from django.contrib.auth.models import User
    from django.db import connection

    from annotation.importers.service import benchmark_import
    from annotation.models import Benchmark, Worker, WorkerKind
    from annotation.roles import ensure_groups
    from bench.pages import ANNOTATORS, SUBMITS_EACH, build
    from bench.scheme_files import write_prolex_file, write_sws_file, write_tsar_file
    from hits.models import HITItem
    from hits.services import assignment_claim_next, assignment_submit, hits_generate
    from hits.services.planning import HitsGenerationError
    from schemes import get_scheme
    from schemes.base import main_step

    if scheme_name == "swords":
        name = NAME if scale == 1.0 else f"bench-pages-{scale:g}x".replace(".", "_")
        build(name, scale, rebuild=False)
        return name
    name = f"bench-{scheme_name}-{scale:g}x".replace(".", "_")
    researchers, annotators = ensure_groups()
    researcher, _ = User.objects.get_or_create(username="bench-researcher", defaults={"is_staff": True})
    researcher.groups.add(researchers)
    if Benchmark.objects.filter(name=name).exists():
        return name
    writers = {
        "prolex": (write_prolex_file, ".csv"),
        "sws": (write_sws_file, ".json"),
        "tsar": (write_tsar_file, ".tsv"),
    }
    writer, suffix = writers[scheme_name]
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / f"{scheme_name}-{scale:g}x{suffix}"
        writer(path, scale=scale, seed=0)
        started = time.perf_counter()
        benchmark_import(path_or_file=str(path), benchmark_name=name, fmt=scheme_name, created_by=researcher)
        print(f"imported {name} in {time.perf_counter() - started:.1f} s", flush=True)
    benchmark = Benchmark.objects.get(name=name)
    benchmark.created_by = researcher
    benchmark.save(update_fields=["created_by"])
    scheme = get_scheme(benchmark)
    workers = []
    for number in range(ANNOTATORS):
        user, _ = User.objects.get_or_create(username=f"bench-annotator-{number}")
        user.groups.add(annotators)
        worker, _ = Worker.objects.get_or_create(
            user=user, defaults={"external_id": user.username, "kind": WorkerKind.LOCAL}
        )
        workers.append(worker)
    try:
        hits_generate(
            benchmark=benchmark,
            step=main_step(scheme.steps),
            seed=1,
            created_by=researcher,
            annotators=workers if scheme.assigned else None,
        )
    except HitsGenerationError as error:
        # A file that judged every substitute it names leaves nothing to collect.
        print(f"  no batch: {error}", flush=True)
    for number, worker in enumerate(workers):
        for _ in range(SUBMITS_EACH):
            assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
            if assignment is None:
                break
            items = HITItem.objects.filter(hit_id=assignment.hit_id)
            assignment_submit(
                assignment=assignment, answers={item.pk: scheme_answer(scheme, item, number) for item in items}
            )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return name


def _urls(benchmark: Any, *, exports: bool) -> list[tuple[str, str]]:
    """(name, URL) of every download measured."""
    from django.urls import reverse

    from analysis.browser import TABLES
    from analysis.exports import DATASET, STATS, export_formats
    from hits.models import Batch

    urls = []
    # The data browser's tables and the HITs CSV are timed on the SWORDS benchmark; every scheme's exports.
    for table in TABLES if benchmark.scheme == "swords" else ():
        base = reverse(f"data-{table}-csv", args=[benchmark.name])
        urls += [(table, base), (f"{table} ({FILTERED[table]})", f"{base}?{FILTERED[table]}")]
    for batch in Batch.objects.filter(benchmark=benchmark, benchmark__scheme="swords").order_by("pk"):
        urls.append((f"hits-csv (batch {batch.pk})", reverse("batch-export", args=[batch.pk])))
    if exports:
        for chosen in export_formats(benchmark):
            # The exports of rows: the CSV tables, the answers' JSON Lines and the scheme's released
            # format; not the statistics document nor the dataset folder's zip.
            if chosen.name not in (STATS, DATASET):
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
        # The other schemes' downloads are named with their scheme.
        result = Measured(download if benchmark.scheme == "swords" else f"{benchmark.scheme}: {download}", url)
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
            f"  {result.name[:48]:<48} {min(result.wall):7.2f}s {min(result.cpu):7.2f}s {result.statements:5d} "
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
    parser.add_argument("--no-exports", action="store_true", help="leave out the export formats")
    parser.add_argument(
        "--schemes",
        default=",".join(SCHEMES),
        help=f"the schemes whose benchmarks are measured, comma-separated (default {','.join(SCHEMES)})",
    )
    args = parser.parse_args(argv)
    schemes = [scheme for scheme in args.schemes.split(",") if scheme]
    unknown = sorted(set(schemes) - set(SCHEMES))
    if unknown:
        parser.error(f"unknown schemes {', '.join(unknown)}; expected some of {', '.join(SCHEMES)}")

    from bench.pages import _environment

    ensure_database(args.database_url)
    os.environ.update(_environment(args.database_url, "", debug=False))
    django_setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    names = [build_scheme(scheme) for scheme in schemes]
    with connection.cursor() as cursor:
        print(f"database {urlparse(args.database_url).path.lstrip('/')}; {machine(cursor)}", flush=True)
    print(
        f"  {'download':<48} {'wall':>8} {'CPU':>8} {'stmts':>5} {'rows':>8} {'size':>9} {'rate':>8} "
        f"{'floor':>8} {'CPU':>8} {'ratio':>6} {'CPU':>6}"
    )
    only = frozenset(filter(None, args.only.split(",")))
    results = [
        result for name in names for result in measure(args.repeat, only=only, exports=not args.no_exports, name=name)
    ]
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
