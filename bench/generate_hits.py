"""Time `manage.py create_batch BENCHMARK --step 2` as a user runs it, for ~45,700 candidates.

    python -m bench.generate_hits [--candidates 45705] [--warm 5] [--cold 2] [--keep]

Runs on PostgreSQL in its own database (BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/crowdlex_bench_gen), created and migrated if missing. Builds a
synthetic benchmark with bulk inserts (targets of 15 to 75 candidates, real English words), then
runs the whole command in a fresh process each time: start-up, planning, writing and commit. The
wall clock and the command's CPU time (user + system) are measured for each run, with the
distractor pool's cache cold (an empty DERIVED_CACHE_DIR: the pool is built, as on a new host)
and warm (the file the first run wrote). Between runs the batch is closed, which frees its
candidates for the next one. Each batch is checked (every candidate once, two controls per HIT),
the statements of one generation are counted in this process, and the benchmark is deleted at
the end unless --keep. The CPU time of the command's PostgreSQL backend (the COPYs, the deferred
foreign-key checks at commit) is sampled from /proc while it runs, when the server is on this
machine. A first run, not counted, compiles the modules (cached in a folder of the
benchmark's own, as an installed system caches them) and writes the pool's file.

The floor (``bench.floor``), measured in the same run: the generation's own statements, recorded
from one ``hits_generate`` in this process (its reads, its few inserts and updates, and its COPYs
of the HITs and items with their rows), run again by psycopg2 alone in a transaction that is rolled
back. The generation itself is timed in this process the same way (cache warm, rolled back), so
the two differ only by the platform's work around the statements: planning the HITs, choosing
controls, building the rows. Goal: the in-process generation within 2 times its floor (planning
HITs is real work the floor does not do); the whole command under 1.5 s with the cache warm stays
as context (start-up included), with the machine described.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from unittest import mock

from bench import ensure_database, process_cpu_seconds
from bench.floor import (
    StatementRecorder,
    machine,
    psycopg2_connection,
    ratio_figure,
    replay,
    statements_and_copies_recorded,
)

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/crowdlex_bench_gen"
ROOT = Path(__file__).resolve().parents[1]
GOAL_SECONDS = 1.5
GOAL_FLOOR_RATIO = 2.0


def _drop(benchmark_id: int) -> None:
    """Delete the synthetic benchmark: its large tables first by statement (the ORM's cascade would
    load every row), then the benchmark itself through the ORM, whose cascade finds whatever else
    refers to it (a change counter, its activity) with the platform's tables as they are today."""
    from django.db import connection, transaction

    from annotation.models import Activity, Benchmark, Candidate, Context, Target
    from hits.models import HIT, Batch, HITItem

    batches = f"SELECT id FROM {Batch._meta.db_table} WHERE benchmark_id = %s"
    hits = f"SELECT id FROM {HIT._meta.db_table} WHERE batch_id IN ({batches})"
    targets = f"SELECT id FROM {Target._meta.db_table} WHERE benchmark_id = %s"
    statements = [
        f"DELETE FROM {HITItem._meta.db_table} WHERE hit_id IN ({hits})",
        f"DELETE FROM {HIT._meta.db_table} WHERE batch_id IN ({batches})",
        f"DELETE FROM {Activity._meta.db_table} WHERE benchmark_id = %s",
        f"DELETE FROM {Batch._meta.db_table} WHERE benchmark_id = %s",
        f"DELETE FROM {Candidate._meta.db_table} WHERE target_id IN ({targets})",
        f"DELETE FROM {Target._meta.db_table} WHERE benchmark_id = %s",
        f"DELETE FROM {Context._meta.db_table} WHERE benchmark_id = %s",
    ]
    with transaction.atomic():
        with connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement, [benchmark_id])
        Benchmark.objects.filter(pk=benchmark_id).delete()


def _build(*, candidates: int, per_target: int, seed: int) -> tuple[int, str, int, int]:
    """A benchmark of exactly ``candidates`` candidates; returns its id, name, targets and candidates."""
    import numpy as np
    import wordfreq
    from django.db import connection

    from annotation.models import Benchmark, Candidate, Context, Target, normalize_candidate, text_digest

    rng = np.random.default_rng(seed)
    vocabulary = [w for w in wordfreq.top_n_list("en", 30_000) if w.isalpha() and len(w) > 2]
    target_count = max(1, round(candidates / per_target))
    sizes = rng.integers(max(1, per_target // 3), per_target * 5 // 3 + 1, size=target_count).astype(float)
    sizes = np.maximum(1, np.floor(sizes * candidates / sizes.sum())).astype(int)
    # Hand out what rounding left over (or took) one candidate per target, so the total is exact.
    sizes[: candidates - int(sizes.sum())] += 1
    benchmark = Benchmark.objects.create(name=f"bench-generate-{int(time.time())}", title="generation benchmark")
    contexts = Context.objects.bulk_create(
        Context(benchmark=benchmark, text=text, digest=text_digest(text))
        for text in (f"Sentence number {i} where the word {vocabulary[i]} appears." for i in range(target_count))
    )
    targets = Target.objects.bulk_create(
        Target(
            context=context,
            benchmark=benchmark,
            word=vocabulary[i],
            lemma=vocabulary[i],
            offset=len(f"Sentence number {i} where the word "),
            pos=("noun", "verb", "adj", "adv")[i % 4],
        )
        for i, context in enumerate(contexts)
    )
    rows = []
    for i, (target, size) in enumerate(zip(targets, sizes, strict=True)):
        # Words other than the target's own, so that no two candidates of a target normalise alike.
        choices = rng.choice(len(vocabulary) - 1, size=int(size), replace=False)
        for word in choices + (choices >= i):
            text = vocabulary[int(word)]
            rows.append(
                Candidate(target=target, text=text, normalized=normalize_candidate(text), sources=["thesaurus"])
            )
    Candidate.objects.bulk_create(rows, batch_size=5000)
    # As autovacuum would have by the time a researcher creates a batch (a server with it off
    # plans every query blind).
    with connection.cursor() as cursor:
        for model in (Context, Target, Candidate):
            cursor.execute(f"ANALYZE {model._meta.db_table}")
    total = Candidate.objects.filter(target__benchmark=benchmark).count()
    return benchmark.pk, benchmark.name, target_count, total


def _check(*, batch_id: int, candidates: int) -> tuple[int, int]:
    """Every candidate in one HIT item, each HIT with its two controls; returns (HITs, items)."""
    from django.db.models import Count, Q

    from hits.models import HIT, HITItem

    items = HITItem.objects.filter(hit__batch_id=batch_id)
    judged = items.filter(candidate__isnull=False)
    if judged.count() != candidates or judged.values("candidate").distinct().count() != candidates:
        raise SystemExit(f"batch {batch_id} does not hold every candidate exactly once")
    hits = HIT.objects.filter(batch_id=batch_id).annotate(controls=Count("items", filter=Q(items__control=True)))
    if hits.exclude(controls=2).exists():
        raise SystemExit(f"batch {batch_id} has HITs without their two controls")
    return hits.count(), items.count()


class _BackendWatch(threading.Thread):
    """Samples the CPU time of the PostgreSQL backends that serve the benchmark's database for
    anyone but this process while a command runs (its own connection is the only other one).

    A backend's time is read from /proc every few milliseconds until it exits: what it spends
    after the last sample (closing the connection) is not counted. Zero when the server runs
    elsewhere (its processes are not in this machine's /proc)."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            self._own = cursor.fetchone()[0]
        self._url = url
        self._finished = threading.Event()
        self._seen: dict[int, float] = {}

    def run(self) -> None:
        import psycopg2

        watcher = psycopg2.connect(self._url)
        watcher.autocommit = True
        try:
            with watcher.cursor() as cursor:
                lookups = 0
                while not self._finished.is_set():
                    if lookups % 10 == 0:
                        cursor.execute(
                            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                            " AND pid NOT IN (pg_backend_pid(), %s)",
                            [self._own],
                        )
                        for (pid,) in cursor.fetchall():
                            self._seen.setdefault(pid, 0.0)
                    lookups += 1
                    for pid in self._seen:
                        seconds = process_cpu_seconds(pid)
                        if seconds is not None:
                            self._seen[pid] = seconds
                    self._finished.wait(0.005)
        finally:
            watcher.close()

    def stop(self) -> float:
        """Stop sampling; the backends' CPU seconds."""
        self._finished.set()
        self.join()
        return sum(self._seen.values())


def _run_command(*, url: str, name: str, seed: int, cache: Path, bytecode: Path) -> tuple[float, float, float, int]:
    """One `manage.py create_batch` in a fresh process: wall seconds, its CPU seconds, its PostgreSQL
    backend's CPU seconds, the batch id."""
    environment = {
        **os.environ,
        "DATABASE_URL": url,
        "DEBUG": "1",
        "DERIVED_CACHE_DIR": str(cache),
        # Compiled modules are cached as on any installed system (some shells turn that off, which
        # costs every start half a second of compiling), in a folder of the benchmark's own.
        "PYTHONPYCACHEPREFIX": str(bytecode),
    }
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    watch = _BackendWatch(url)
    watch.start()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "manage.py", "create_batch", name, "--step", "2", "--seed", str(seed)],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    backend = watch.stop()
    if completed.returncode != 0:
        raise SystemExit(f"create_batch failed:\n{completed.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, backend, int(completed.stdout.strip().splitlines()[-1])


def _count_statements(benchmark_id: int, seed: int) -> tuple[int, int]:
    """Statements (and their COPYs) of one generation in this process; the batch is closed after."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotation.models import Benchmark
    from crowdlex.dialect import POSTGRESQL
    from hits.services import batch_close, hits_generate

    copies = 0
    copy_rows = POSTGRESQL.copy_rows

    def counted(*args: Any, **kwargs: Any) -> None:  # COPY runs on the raw cursor, which Django does not see
        nonlocal copies
        copies += 1
        copy_rows(*args, **kwargs)

    benchmark = Benchmark.objects.get(pk=benchmark_id)
    with mock.patch.object(POSTGRESQL, "copy_rows", counted), CaptureQueriesContext(connection) as queries:
        batch = hits_generate(benchmark=benchmark, step=2, seed=seed)
    batch_close(batch=batch)
    return len(queries.captured_queries) + copies, copies


def _generation_against_floor(benchmark_id: int, seed: int, url: str, repeat: int = 3) -> tuple[float, float, int]:
    """Median seconds of ``hits_generate`` in this process and of its floor (module docstring),
    each rolled back; and the floor's statements."""
    from django.db import transaction

    from annotation.models import Benchmark
    from hits.services import hits_generate

    benchmark = Benchmark.objects.get(pk=benchmark_id)
    recorder = StatementRecorder()

    def generate(record: bool) -> float:
        with transaction.atomic():
            started = time.perf_counter()
            if record:
                with statements_and_copies_recorded(recorder):
                    hits_generate(benchmark=benchmark, step=2, seed=seed)
            else:
                hits_generate(benchmark=benchmark, step=2, seed=seed)
            seconds = time.perf_counter() - started
            transaction.set_rollback(True)
        return seconds

    generate(True)
    platform = statistics.median(generate(False) for _ in range(repeat))
    floor_connection = psycopg2_connection(url)
    floors = []
    try:
        for _ in range(repeat):
            started = time.perf_counter()
            with floor_connection.cursor() as cursor:
                replay(cursor, recorder.statements, follow_ids=False)
            floors.append(time.perf_counter() - started)
            floor_connection.rollback()
    finally:
        floor_connection.close()
    return platform, statistics.median(floors), len(recorder.statements)


def _load() -> str:
    return ", ".join(f"{load:.2f}" for load in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", type=int, default=45_705, help="candidates in all (exactly)")
    parser.add_argument("--per-target", type=int, default=45, help="mean candidates per target (SWORDS: ~50)")
    parser.add_argument("--warm", type=int, default=5, help="runs with the distractor pool's cache file present")
    parser.add_argument("--cold", type=int, default=2, help="runs with an empty cache directory")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the benchmark and its batches")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL))
    args = parser.parse_args(argv)
    if args.warm < 1 or args.cold < 0:
        parser.error("--warm must be at least 1 and --cold at least 0")

    ensure_database(args.database_url)
    os.environ["DATABASE_URL"] = args.database_url
    from bench import django_setup

    django_setup()
    from django.core.management import call_command

    from hits.models import Batch
    from hits.services import batch_close

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    benchmark_id, name, targets, candidates = _build(
        candidates=args.candidates, per_target=args.per_target, seed=args.seed
    )
    print(f"built {name}: {targets} targets, {candidates} candidates in {time.perf_counter() - started:.1f} s")

    results: dict[str, list[tuple[float, float, float]]] = {"cold": [], "warm": []}
    seed = args.seed
    try:
        with tempfile.TemporaryDirectory() as directory:
            warm_cache = Path(directory) / "warm"
            statements, copies = _count_statements(benchmark_id, seed)
            print(f"one generation: {statements} statements ({copies} of them COPY)")
            in_process, floor, replayed = _generation_against_floor(benchmark_id, seed, args.database_url)
            print(f"load average before: {_load()}", flush=True)
            bytecode = Path(directory) / "bytecode"
            # A first run, not counted, compiles the modules and writes the pool's file for the warm runs.
            runs = [("", warm_cache)]
            runs += [("cold", Path(directory) / f"cold-{i}") for i in range(args.cold)]
            runs += [("warm", warm_cache)] * args.warm
            for kind, cache in runs:
                seed += 1
                wall, cpu, backend, batch_id = _run_command(
                    url=args.database_url, name=name, seed=seed, cache=cache, bytecode=bytecode
                )
                hits, items = _check(batch_id=batch_id, candidates=candidates)
                batch_close(batch=Batch.objects.get(pk=batch_id))
                if kind:
                    results[kind].append((wall, cpu, backend))
                    print(
                        f"{kind:>5}: {wall:.2f} s wall, {cpu:.2f} s CPU, {backend:.2f} s in PostgreSQL "
                        f"for {hits} HITs, {items} items (load average {_load()})",
                        flush=True,
                    )
            print(f"load average after: {_load()}")
    finally:
        if not args.keep:
            _drop(benchmark_id)

    command = f"manage.py create_batch {name} --step 2 --seed N"
    for kind, measured in results.items():
        if measured:
            walls, cpus, backends = zip(*measured, strict=True)
            print(
                f"{kind} cache, {command}: median {statistics.median(walls):.2f} s wall "
                f"(min {min(walls):.2f}), {statistics.median(cpus):.2f} s CPU (min {min(cpus):.2f}), "
                f"{statistics.median(backends):.2f} s in PostgreSQL (min {min(backends):.2f}), {len(measured)} runs"
            )
    warm_wall = statistics.median(wall for wall, _, _ in results["warm"])
    from django.db import connection

    with connection.cursor() as cursor:
        described = machine(cursor)
    ratio_figure(
        f"hits_generate step 2, {candidates:,} candidates",
        in_process,
        floor,
        goal=GOAL_FLOOR_RATIO,
        context=f"in this process {in_process:.2f} s, its {replayed} statements by psycopg2 alone {floor:.2f} s "
        f"(medians, rolled back); the whole command {warm_wall:.2f} s with the cache warm (goal {GOAL_SECONDS} s); "
        f"{described}",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
