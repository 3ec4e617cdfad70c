"""Time importing a SWORDS file (a fresh import and an idempotent re-import).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/NAME python -m bench.import_swords PATH [--repeat 3]

Migrate the database first. Each round imports PATH into a scratch benchmark, re-imports it (which
must change nothing), then deletes the benchmark. Prints the counts, the median times and the
process's peak memory.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench import django_setup


def _backend_cpu_seconds(connection: Any) -> float | None:
    """CPU time of this connection's PostgreSQL backend, when the server runs on this machine."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.import_swords", description=__doc__.splitlines()[0])
    parser.add_argument("path", help="a SWORDS JSON file, gzipped or not")
    parser.add_argument("--repeat", type=int, default=3, help="rounds to time (default 3)")
    parser.add_argument("--format", default="auto", choices=["auto", "jsonl", "csv", "swords"])
    args = parser.parse_args(argv)

    django_setup()
    from django.db import connection

    from annotation.models import Benchmark
    from annotation.selectors import benchmark_counts
    from annotation.services import benchmark_import

    name = f"bench-import-{os.getpid()}"
    fresh: list[float] = []
    again: list[float] = []
    cpu: list[float] = []
    database_cpu: list[float] = []
    counts: dict[str, int] = {}
    print(
        f"database: {connection.vendor} {connection.settings_dict.get('NAME')}, load average {os.getloadavg()[0]:.1f}"
    )
    for round_number in range(1, args.repeat + 1):
        try:
            started, started_cpu = time.perf_counter(), time.process_time()
            started_database = _backend_cpu_seconds(connection)
            report = benchmark_import(path_or_file=args.path, benchmark_name=name, fmt=args.format)
            fresh.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
            ended_database = _backend_cpu_seconds(connection)
            if started_database is not None and ended_database is not None:
                database_cpu.append(ended_database - started_database)
            started = time.perf_counter()
            repeat = benchmark_import(path_or_file=args.path, benchmark_name=name, fmt=args.format)
            again.append(time.perf_counter() - started)
            if repeat.changed:
                print("re-import changed the benchmark: it should not", file=sys.stderr)
                return 1
            counts = benchmark_counts(benchmark=Benchmark.objects.get(name=name))
            mismatches = report.id_mismatch_count
        finally:
            Benchmark.objects.filter(name=name).delete()
        print(
            f"round {round_number}: import {fresh[-1]:.2f} s (this process's CPU {cpu[-1]:.2f} s), "
            f"re-import {again[-1]:.2f} s"
        )

    print("counts:", ", ".join(f"{key} {value:,}" for key, value in counts.items()))
    print(f"id mismatches: {mismatches}")
    print(f"import     median {statistics.median(fresh):.2f} s  (min {min(fresh):.2f} s)")
    print(f"import CPU median {statistics.median(cpu):.2f} s in this process")
    if database_cpu:
        print(f"import CPU median {statistics.median(database_cpu):.2f} s in the PostgreSQL backend")
    print(f"re-import  median {statistics.median(again):.2f} s  (min {min(again):.2f} s)")
    print(f"re-import / import: {statistics.median(again) / statistics.median(fresh):.2f}")
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak memory: {peak_kib / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
