"""The data browser's pages at the size of the SWORDS test split: each table's first page, a deep page,
a filtered and a sorted view, timed through Django's test client (wall time of the whole request,
template included) with the statements each one ran.

    python -m bench.data_browser [--repeat 5] [--rebuild]

Runs on PostgreSQL in its own database (BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/crowdlex_browser_bench), created and migrated if missing. The
benchmark (762 targets, 45,705 candidates, 253,917 labels by 300 workers, as the SWORDS test split;
``bench.synthetic``) is built once with bulk inserts and kept; a batch of HITs of ten candidates
each, three assignments apiece, is added to it. Each page's time is the median of --repeat runs after one
warm-up, with a statement count that does not grow with the data.

The floor of each view (``bench.floor.run_read``): the statements the page ran, run again by psycopg2
alone on a connection of its own, every row fetched (best of --repeat). Every view's ratio to its
floor is a FIGURE against 2 x (a page whose own database work is most of its time); the median and
the worst ratio follow. Milliseconds are context: each view's, and how many are within 150 ms. The counts the
candidates and workers tables sort by are the tallies kept with the labels (annotation.tallies),
counted once after the bulk build.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from bench import django_setup, ensure_database
from bench.floor import machine, ratio_figure, replayable, run_read

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/crowdlex_browser_bench"
NAME = "bench-browser-test-split"
# The SWORDS test split (SWORDS §4, Table 2).
SHAPE = {"targets": 762, "candidates": 45705, "labels": 253917}
# Printed as context beside each page's milliseconds (the figures are the ratios to the floor).
CONTEXT_MS = 150.0
# Each page within this many times its floor: the same statements run by psycopg2 alone.
FLOOR_GOAL = 2.0


def build(*, rebuild: bool) -> Any:
    from django.core.management import call_command
    from django.utils import timezone

    from annotation.models import Benchmark, Candidate, Worker
    from bench.synthetic import Shape
    from bench.synthetic import build as build_synthetic
    from hits.models import HIT, Assignment, AssignmentStatus, Batch

    call_command("migrate", verbosity=0)
    if rebuild:
        Benchmark.objects.filter(name=NAME).delete()
    benchmark = Benchmark.objects.filter(name=NAME).first()
    if benchmark is not None:
        return benchmark
    started = time.perf_counter()
    benchmark = build_synthetic(name=NAME, shape=Shape(**SHAPE), seed=5)
    batch = Batch.objects.create(benchmark=benchmark, step=2, assignments_per_hit=3)
    parts: dict[int, int] = {}
    hits = []
    for target_id in Candidate.objects.filter(target__benchmark=benchmark).values_list("target_id", flat=True):
        parts[target_id] = parts.get(target_id, 0) + 1
    for target_id, candidates in parts.items():
        hits += [
            HIT(batch=batch, target_id=target_id, part=part, assignments_required=3)
            for part in range((candidates + 9) // 10)
        ]
    made = HIT.objects.bulk_create(hits, batch_size=5000)
    workers = list(Worker.objects.filter(external_id__startswith=f"{NAME}-w").values_list("pk", flat=True))
    now = timezone.now()
    Assignment.objects.bulk_create(
        [
            Assignment(
                hit=hit,
                worker_id=workers[(index * 3 + slot) % len(workers)],
                status=AssignmentStatus.SUBMITTED,
                claimed_at=now,
                deadline=now + timedelta(minutes=30),
                submitted_at=now,
                controls_total=2,
                controls_correct=2 if (index + slot) % 7 else 1,
            )
            for index, hit in enumerate(made)
            for slot in range(3)
        ],
        batch_size=5000,
    )
    from django.db import connection

    from annotation.tallies import tallies_benchmark_recount

    # The labels were bulk-inserted rather than imported: their tallies are counted once, as a repair would.
    tallies_benchmark_recount(benchmark_id=benchmark.pk)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(f"built {NAME} ({len(made)} HITs) in {time.perf_counter() - started:.1f} s", flush=True)
    return benchmark


def views(benchmark: Any) -> list[tuple[str, str, str]]:
    """(table, what, query) of every view measured; the deep page is reached by following next links."""
    from annotation.models import Candidate, Label, Worker
    from hits.models import HIT

    target = benchmark.targets.order_by("pk")[300].pk
    candidate = Candidate.objects.filter(target__benchmark=benchmark).order_by("pk")[20000].pk
    worker = Worker.objects.filter(external_id=f"{NAME}-w17").get().pk
    hit = HIT.objects.filter(batch__benchmark=benchmark).order_by("pk")[2000]
    assert Label.objects.filter(candidate_id=candidate).exists()
    return [
        ("items", "first page", ""),
        ("items", "filtered", "q=word12&pos=verb"),
        ("items", "sorted", "sort=candidates&dir=desc"),
        ("candidates", "first page", ""),
        ("candidates", "filtered", f"target={target}&stage=final"),
        ("candidates", "sorted", "sort=text&dir=desc"),
        ("candidates", "sorted by score", "sort=score&dir=desc"),
        ("candidates", "sorted by labels", "sort=labels&dir=desc"),
        ("candidates", "one category", "category=acceptable"),
        ("labels", "first page", ""),
        ("labels", "filtered", f"worker={worker}&value=accept"),
        ("labels", "sorted", "sort=value&dir=desc"),
        ("labels", "one candidate", f"candidate={candidate}"),
        ("hits", "first page", ""),
        ("hits", "filtered", f"batch={hit.batch_id}&target={hit.target_id}"),
        ("hits", "sorted", "sort=item"),
        ("workers", "first page", ""),
        ("workers", "filtered", "q=w1"),
        ("workers", "sorted", "sort=labels&dir=desc"),
        ("workers", "sorted by assignments", "sort=assignments&dir=desc"),
        ("workers", "sorted by accuracy", "sort=accuracy"),
    ]


def deep_query(client: Any, url: str, pages: int) -> str:
    """The query string of the page ``pages`` pages in, following the next links as a reader would."""
    import re

    query = ""
    for _ in range(pages):
        answer = client.get(f"{url}?{query}")
        found = re.search(r'href="\?([^"]+)" rel="next"', answer.content.decode())
        if found is None:
            break
        query = found.group(1).replace("&amp;", "&")
    return query


def measure(client: Any, url: str, repeat: int, raw: Any) -> Measured:
    """GET url: the median of ``repeat`` requests after one warm-up, the statements the last one ran
    and their floor (the same statements run by psycopg2 alone, best of ``repeat``)."""
    from django.db import connection

    client.get(url)  # warm-up
    captured: list[tuple[str, Any]] = []

    def capture(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        captured.append((sql, params))
        return execute(sql, params, many, context)

    times = []
    status = 0
    for _ in range(repeat):
        captured.clear()
        started = time.perf_counter()
        with connection.execute_wrapper(capture):
            answer = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        status = answer.status_code
    floor = min(_floor(captured, raw) for _ in range(repeat))
    return Measured(statistics.median(times), floor, len(captured), status)


@dataclass
class Measured:
    milliseconds: float
    floor_ms: float
    statements: int
    status: int

    @property
    def ratio(self) -> float:
        return self.milliseconds / self.floor_ms if self.floor_ms > 0 else float("inf")


def _floor(statements: list[tuple[str, Any]], raw: Any) -> float:
    """Milliseconds to run ``statements`` with psycopg2 alone, fetching every row: the page's database
    work with no framework around it (``bench.floor.run_read``)."""
    replay = replayable(statements)
    started = time.perf_counter()
    run_read(raw, replay)
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--deep", type=int, default=200, help="pages followed to reach the deep page")
    args = parser.parse_args()
    url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL)
    ensure_database(url)
    os.environ["DATABASE_URL"] = url
    django_setup()
    import psycopg2
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.test import Client

    from analysis.selectors import scans_without_jit

    settings.ALLOWED_HOSTS = ["*"]
    benchmark = build(rebuild=args.rebuild)
    researcher = User.objects.filter(username="bench-browser").first() or User.objects.create_superuser(
        "bench-browser", "", None
    )
    client = Client()
    client.force_login(researcher)
    database = settings.DATABASES["default"]
    raw = psycopg2.connect(
        host=database["HOST"], port=database["PORT"] or 5432, user=database["USER"], dbname=database["NAME"]
    )
    rows: list[tuple[str, str, Measured]] = []
    print(f"{'table':<11} {'view':<28} {'median':>9} {'floor':>9} {'ratio':>6} {'stmts':>5}  goal {FLOOR_GOAL:g} x")
    with scans_without_jit():
        measured = list(views(benchmark))
        for table in ("items", "candidates", "labels", "hits", "workers"):
            base = f"/benchmarks/{NAME}/data/{table}/"
            deep = deep_query(client, base, args.deep)
            measured.append((table, f"deep page ({args.deep} pages in)" if deep else "deep page (none)", deep))
        for table, what, query in measured:
            base = f"/benchmarks/{NAME}/data/{table}/"
            found = measure(client, f"{base}?{query}", args.repeat, raw)
            rows.append((table, what, found))
            verdict = "within" if found.ratio <= FLOOR_GOAL else "OVER"
            print(
                f"{table:<11} {what:<28} {found.milliseconds:7.1f}ms {found.floor_ms:7.1f}ms {found.ratio:6.1f} "
                f"{found.statements:5d}  {verdict}{'' if found.status == 200 else f'  HTTP {found.status}'}",
                flush=True,
            )
    raw.close()
    failed = [row for row in rows if row[2].status != 200]
    # Each page against its floor: how much of its time is the database's work it cannot avoid. The
    # milliseconds are context (module docstring).
    for table, what, found in rows:
        ratio_figure(
            f"data browser, {table} {what}",
            found.milliseconds,
            found.floor_ms,
            goal=FLOOR_GOAL,
            context=f"{found.milliseconds:.1f} ms, floor {found.floor_ms:.1f} ms, {found.statements} statements",
        )
    worst = max(rows, key=lambda row: row[2].ratio)
    slowest = max(rows, key=lambda row: row[2].milliseconds)
    ratios = [row[2].ratio for row in rows]
    floored = sum(1 for ratio in ratios if ratio <= FLOOR_GOAL)
    print(
        f"ratio to the floor: median {statistics.median(ratios):.2f} x, worst {worst[2].ratio:.2f} x "
        f"({worst[0]} {worst[1]}); {floored} of {len(rows)} views within {FLOOR_GOAL:g} x; {machine()}"
    )
    within = sum(1 for row in rows if row[2].milliseconds <= CONTEXT_MS)
    counts = sorted({row[2].statements for row in rows})
    print(
        f"context: the slowest page {slowest[0]} {slowest[1]} {slowest[2].milliseconds:.1f} ms; {within} of "
        f"{len(rows)} views within {CONTEXT_MS:g} ms; statements per page: {counts}"
    )
    # The goals are reported, not enforced: a missed goal is a figure to read, a failed request an error.
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
