"""Statistics + agreement + export at the size of the SWORDS dev file and of the full SWORDS benchmark.

    python -m bench.analysis_full [--repeat 3] [--rebuild] [--dev-file PATH]

Runs on PostgreSQL in its own database (BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/crowdlex_analysis_bench), created and migrated if missing.
Synthetic benchmarks are built once with bulk inserts and kept for later runs (--rebuild drops
them). Each size is measured in a fresh process so that its peak RSS is its own; the figures are
medians over --repeat runs. Goal: stats + agreement + export of the full size under 3 s and 300 MB,
statistics and agreement sharing one load of the rows as the statistics page does (the sum of
three separate calls is printed too).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from bench import django_setup

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/crowdlex_analysis_bench"
SIZES = {
    # The public SWORDS v1.1 dev file: 370 targets, 22,978 candidates, 121,938 labels.
    "bench-dev-size": {"targets": 370, "candidates": 22978, "labels": 121938},
    # SWORDS as published (SWORDS §4, Table 2): 1,132 targets, 68,683 candidates, 375,855 labels.
    "bench-full-size": {"targets": 1132, "candidates": 68683, "labels": 375855},
}
GOAL_SECONDS = 3.0
GOAL_MEGABYTES = 300.0


def _setup(url: str) -> None:
    os.environ["DATABASE_URL"] = url
    django_setup()


def _ensure_database(url: str) -> None:
    import psycopg2

    parsed = urlparse(url)
    name = parsed.path.lstrip("/")
    admin = psycopg2.connect(
        host=parsed.hostname, port=parsed.port or 5432, user=parsed.username or "postgres", dbname="postgres"
    )
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        if cursor.fetchone() is None:
            cursor.execute(f'CREATE DATABASE "{name}"')
    admin.close()


def build(url: str, *, rebuild: bool, dev_file: str | None) -> list[str]:
    """Create the benchmarks to measure; returns their names."""
    _ensure_database(url)
    _setup(url)
    from django.core.management import call_command

    from annotation.models import Benchmark
    from bench.synthetic import Shape
    from bench.synthetic import build as build_synthetic

    call_command("migrate", verbosity=0)
    names = []
    for name, size in SIZES.items():
        if rebuild:
            Benchmark.objects.filter(name=name).delete()
        if not Benchmark.objects.filter(name=name).exists():
            started = time.perf_counter()
            build_synthetic(name=name, shape=Shape(**size), seed=1)
            print(f"built {name} in {time.perf_counter() - started:.1f} s", flush=True)
        names.append(name)
    if dev_file:
        name = "bench-swords-dev"
        if rebuild:
            Benchmark.objects.filter(name=name).delete()
        if not Benchmark.objects.filter(name=name).exists():
            from annotation.services import benchmark_import

            started = time.perf_counter()
            benchmark_import(path_or_file=dev_file, benchmark_name=name)
            print(f"imported {dev_file} in {time.perf_counter() - started:.1f} s", flush=True)
        names.insert(0, name)
    return names


def measure(url: str, name: str, repeat: int) -> dict[str, Any]:
    """Time each operation ``repeat`` times in this process; report medians and the peak RSS."""
    _setup(url)
    from analysis import services
    from annotation.models import Benchmark

    benchmark = Benchmark.objects.get(name=name)
    timings: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}

    def timed(label: str, run: Any) -> Any:
        started, started_cpu = time.perf_counter(), time.process_time()
        result = run()
        timings.setdefault(label, []).append(time.perf_counter() - started)
        cpu.setdefault(label, []).append(time.process_time() - started_cpu)
        return result

    def shared() -> None:
        # As the statistics page does: one load of the rows for both.
        data = services.benchmark_data(benchmark=benchmark)
        services.benchmark_statistics(benchmark=benchmark, data=data)
        services.benchmark_agreement(benchmark=benchmark, data=data)

    sizes: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as directory:
        for _ in range(repeat):
            stats = timed("statistics", lambda: services.benchmark_statistics(benchmark=benchmark))
            timed("agreement", lambda: services.benchmark_agreement(benchmark=benchmark))
            timed("filter audit", lambda: services.benchmark_filter_audit(benchmark=benchmark))
            timed("stats+agreement shared", shared)
            for format in ("swords", "candidates-csv", "labels-csv"):
                path = Path(directory) / f"{format}.out"
                timed(
                    f"export {format}",
                    lambda format=format, path=path: services.benchmark_export_to_path(
                        benchmark=benchmark, format=format, path=path
                    ),
                )
                sizes[format] = path.stat().st_size
            timed(
                "export swords .gz",
                lambda: services.benchmark_export_to_path(
                    benchmark=benchmark, format="swords", path=Path(directory) / "swords.json.gz"
                ),
            )
    peak_kilobytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    medians = {label: statistics.median(values) for label, values in timings.items()}
    cpu_medians = {label: statistics.median(values) for label, values in cpu.items()}
    return {
        "benchmark": name,
        "targets": stats["targets"],
        "candidates": stats["candidates"],
        "labels": stats["labels"],
        "median_seconds": medians,
        "median_cpu_seconds": cpu_medians,
        # As the statistics page runs them: one load of the rows for statistics and agreement.
        "stats_agreement_export_seconds": medians["stats+agreement shared"] + medians["export swords"],
        "separate_calls_seconds": medians["statistics"] + medians["agreement"] + medians["export swords"],
        "peak_rss_mb": peak_kilobytes / 1024,
        "export_bytes": sizes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rebuild", action="store_true", help="drop and rebuild the synthetic benchmarks")
    parser.add_argument("--dev-file", help="also import and measure this SWORDS file (needs the importer)")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL))
    args = parser.parse_args()

    if args.measure:
        print(json.dumps(measure(args.database_url, args.measure, args.repeat)))
        return

    names = build(args.database_url, rebuild=args.rebuild, dev_file=args.dev_file)
    print(f"load average before measuring: {', '.join(f'{load:.2f}' for load in os.getloadavg())}", flush=True)
    results = []
    for name in names:
        command = [sys.executable, "-m", "bench.analysis_full", "--measure", name, "--repeat", str(args.repeat)]
        completed = subprocess.run(
            [*command, "--database-url", args.database_url],
            check=True,
            capture_output=True,
            text=True,
        )
        results.append(json.loads(completed.stdout.strip().splitlines()[-1]))

    for result in results:
        print(
            f"\n{result['benchmark']}: {result['targets']} targets, {result['candidates']} candidates, "
            f"{result['labels']} labels (median of {args.repeat})"
        )
        print(f"  {'':<24} {'wall':>8} {'our CPU':>9}")
        for label, seconds in result["median_seconds"].items():
            print(f"  {label:<24} {seconds:7.3f}s {result['median_cpu_seconds'][label]:8.3f}s")
        total = result["stats_agreement_export_seconds"]
        print(f"  {'stats+agreement+swords':<24} {total:7.3f}s   peak RSS {result['peak_rss_mb']:.0f} MB")
        print(f"  {'  as three separate calls':<24} {result['separate_calls_seconds']:7.3f}s")
    full = next((r for r in results if r["benchmark"] == "bench-full-size"), None)
    if full is not None:
        dev = next((r for r in results if r["benchmark"] == "bench-dev-size"), None)
        if dev is not None:
            ratio = full["stats_agreement_export_seconds"] / dev["stats_agreement_export_seconds"]
            print(f"\nfull / dev-size time ratio: {ratio:.2f} (labels ratio {full['labels'] / dev['labels']:.2f})")
        print(f"load average after measuring: {', '.join(f'{load:.2f}' for load in os.getloadavg())}")
        verdict = (
            "met"
            if full["stats_agreement_export_seconds"] < GOAL_SECONDS and full["peak_rss_mb"] < GOAL_MEGABYTES
            else "NOT met"
        )
        print(f"goal (< {GOAL_SECONDS:.0f} s and < {GOAL_MEGABYTES:.0f} MB at full size): {verdict}")


if __name__ == "__main__":
    main()
