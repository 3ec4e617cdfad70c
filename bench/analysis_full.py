"""Statistics + agreement + export at the size of the SWORDS dev file, of full SWORDS and of ten times it.

    python -m bench.analysis_full [--repeat 3] [--repeat-10x 1] [--no-10x] [--rebuild] [--dev-file PATH]

Runs on PostgreSQL in its own database (BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/crowdlex_analysis_bench), created and migrated if missing.
Synthetic benchmarks are built once with bulk inserts and kept for later runs (--rebuild drops
them). Each size is measured in a fresh process so that its peak RSS is its own; the figures are
medians over --repeat runs (--repeat-10x at ten times the size, where only the headline is
measured). Goals: stats + agreement + export of the full size within 1 s and 300 MB, statistics
and agreement sharing one load of the rows as the statistics page does (the sum of three separate
calls is printed too); at ten times the size, at most twelve times as long and within 300 MB.

The floor (``bench.floor``), measured in the same process and run: the statements that statistics,
agreement and the SWORDS export run, recorded once, run again by psycopg2 alone, every row read and
dropped: what PostgreSQL and the driver cannot avoid to produce those figures and that file. Goal:
statistics + agreement + SWORDS export within 3 times that floor at every size (the figures and
the file are computed and written from the rows, work the floor does not do). The seconds stay as
context, with the machine described.
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

from bench import django_setup, ensure_database, figure
from bench.floor import StatementRecorder, machine, psycopg2_connection, ratio_figure, replay

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/crowdlex_analysis_bench"
SIZES = {
    # The public SWORDS v1.1 dev file: 370 targets, 22,978 candidates, 121,938 labels.
    "bench-dev-size": {"targets": 370, "candidates": 22978, "labels": 121938},
    # SWORDS as published (SWORDS §4, Table 2): 1,132 targets, 68,683 candidates, 375,855 labels.
    "bench-full-size": {"targets": 1132, "candidates": 68683, "labels": 375855},
    # Ten times SWORDS: 3,758,550 labels, for the growth of time and memory with size.
    "bench-10x-size": {"targets": 11320, "candidates": 686830, "labels": 3758550},
}
# At ten times the size only the headline is measured (and once unless --repeat-10x says otherwise).
HEADLINE_ONLY = {"bench-10x-size"}
GOAL_SECONDS = 1.0
GOAL_MEGABYTES = 300.0
# Ten times the labels may take at most twelve times as long: roughly linear.
GOAL_RATIO = 12.0
GOAL_FLOOR_RATIO = 3.0


def _setup(url: str) -> None:
    os.environ["DATABASE_URL"] = url
    django_setup()


def build(url: str, *, rebuild: bool, dev_file: str | None, skip: set[str]) -> list[str]:
    """Create the benchmarks to measure; returns their names."""
    ensure_database(url)
    _setup(url)
    from django.core.management import call_command

    from annotation.models import Benchmark
    from bench.synthetic import Shape
    from bench.synthetic import build as build_synthetic

    call_command("migrate", verbosity=0)
    names = []
    for name, size in SIZES.items():
        if name in skip:
            continue
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
    # Fresh bulk inserts leave the planner without statistics until autovacuum comes by (which on a
    # busy box can take minutes): without them it plans the export's per-candidate scans badly.
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return names


def _peak_rss_kilobytes() -> int:
    """This process's peak resident memory. Linux keeps ``ru_maxrss`` across exec, so a process
    started by one that built ten times SWORDS would report its parent's peak: VmHWM, which
    belongs to the process's own memory, is read instead where there is one."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def measure(url: str, name: str, repeat: int) -> dict[str, Any]:
    """Time each operation ``repeat`` times in this process; report medians and the peak RSS.
    At the sizes in HEADLINE_ONLY, only statistics and agreement (shared) and the SWORDS export."""
    headline_only = name in HEADLINE_ONLY
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
    stats: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as directory:
        for _ in range(repeat):
            if headline_only:
                timed("stats+agreement shared", shared)
                path = Path(directory) / "swords.out"
                timed(
                    "export swords",
                    lambda path=path: services.benchmark_export_to_path(
                        benchmark=benchmark, format="swords", path=path
                    ),
                )
                sizes["swords"] = path.stat().st_size
                continue
            timed("statistics", lambda: services.benchmark_statistics(benchmark=benchmark))
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
    peak_kilobytes = _peak_rss_kilobytes()
    floor, floor_statements, described = _floor(url, benchmark, repeat)
    medians = {label: statistics.median(values) for label, values in timings.items()}
    cpu_medians = {label: statistics.median(values) for label, values in cpu.items()}
    # The headline-only runs count the benchmark after their timings.
    counted = stats or services.benchmark_statistics(benchmark=benchmark)
    return {
        "benchmark": name,
        "targets": counted["targets"],
        "candidates": counted["candidates"],
        "labels": counted["labels"],
        "median_seconds": medians,
        "median_cpu_seconds": cpu_medians,
        # As the statistics page runs them: one load of the rows for statistics and agreement.
        "stats_agreement_export_seconds": medians["stats+agreement shared"] + medians["export swords"],
        "separate_calls_seconds": None
        if headline_only
        else medians["statistics"] + medians["agreement"] + medians["export swords"],
        "peak_rss_mb": peak_kilobytes / 1024,
        "export_bytes": sizes,
        "floor_seconds": floor,
        "floor_statements": floor_statements,
        "machine": described,
    }


def _floor(url: str, benchmark: Any, repeat: int) -> tuple[float, int, str]:
    """Median seconds of the floor of statistics + agreement + SWORDS export (module docstring),
    its statements, and the machine."""
    from django.db import connection

    from analysis import services

    recorder = StatementRecorder()
    with tempfile.TemporaryDirectory() as directory, connection.execute_wrapper(recorder):
        data = services.benchmark_data(benchmark=benchmark)
        services.benchmark_statistics(benchmark=benchmark, data=data)
        services.benchmark_agreement(benchmark=benchmark, data=data)
        services.benchmark_export_to_path(benchmark=benchmark, format="swords", path=Path(directory) / "swords.out")
    floor_connection = psycopg2_connection(url)
    seconds = []
    try:
        with floor_connection.cursor() as cursor:
            described = machine(cursor)
        for _ in range(repeat):
            started = time.perf_counter()
            with floor_connection.cursor() as cursor:
                replay(cursor, recorder.statements, follow_ids=False)
            seconds.append(time.perf_counter() - started)
            floor_connection.rollback()
    finally:
        floor_connection.close()
    return statistics.median(seconds), len(recorder.statements), described


def _headline_cpu(result: dict[str, Any]) -> float:
    cpu: dict[str, float] = result["median_cpu_seconds"]
    return cpu["stats+agreement shared"] + cpu["export swords"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--repeat-10x", type=int, default=1, help="runs at ten times the size (default 1)")
    parser.add_argument("--no-10x", action="store_true", help="leave out the ten-times size")
    parser.add_argument("--rebuild", action="store_true", help="drop and rebuild the synthetic benchmarks")
    parser.add_argument("--dev-file", help="also import and measure this SWORDS file (needs the importer)")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL))
    args = parser.parse_args()

    if args.measure:
        print(json.dumps(measure(args.database_url, args.measure, args.repeat)))
        return

    skip = {"bench-10x-size"} if args.no_10x else set()
    names = build(args.database_url, rebuild=args.rebuild, dev_file=args.dev_file, skip=skip)
    print(f"load average before measuring: {', '.join(f'{load:.2f}' for load in os.getloadavg())}", flush=True)
    results = []
    for name in names:
        repeat = args.repeat_10x if name in HEADLINE_ONLY else args.repeat
        command = [sys.executable, "-m", "bench.analysis_full", "--measure", name, "--repeat", str(repeat)]
        completed = subprocess.run(
            [*command, "--database-url", args.database_url],
            check=True,
            capture_output=True,
            text=True,
        )
        results.append({**json.loads(completed.stdout.strip().splitlines()[-1]), "repeat": repeat})

    for result in results:
        print(
            f"\n{result['benchmark']}: {result['targets']} targets, {result['candidates']} candidates, "
            f"{result['labels']} labels (median of {result['repeat']})"
        )
        print(f"  {'':<24} {'wall':>8} {'our CPU':>9}")
        for label, seconds in result["median_seconds"].items():
            print(f"  {label:<24} {seconds:7.3f}s {result['median_cpu_seconds'][label]:8.3f}s")
        total = result["stats_agreement_export_seconds"]
        cpu = _headline_cpu(result)
        print(f"  {'stats+agreement+swords':<24} {total:7.3f}s {cpu:8.3f}s   peak RSS {result['peak_rss_mb']:.0f} MB")
        if result["separate_calls_seconds"] is not None:
            print(f"  {'  as three separate calls':<24} {result['separate_calls_seconds']:7.3f}s")
        ratio_figure(
            f"stats+agreement+swords export, {result['benchmark']}",
            total,
            result["floor_seconds"],
            goal=GOAL_FLOOR_RATIO,
            context=f"{total:.3f} s; its {result['floor_statements']} statements by psycopg2 alone, rows read and "
            f"dropped, {result['floor_seconds']:.3f} s (medians); {result['machine']}",
        )
    print(f"load average after measuring: {', '.join(f'{load:.2f}' for load in os.getloadavg())}")
    by_name = {result["benchmark"]: result for result in results}
    full, dev, tenfold = (by_name.get(name) for name in ("bench-full-size", "bench-dev-size", "bench-10x-size"))
    if full is None:
        return
    if dev is not None:
        ratio = full["stats_agreement_export_seconds"] / dev["stats_agreement_export_seconds"]
        print(f"full / dev-size time ratio: {ratio:.2f} (labels ratio {full['labels'] / dev['labels']:.2f})")
    print(
        f"stats+agreement+swords export, full SWORDS (median wall): {full['stats_agreement_export_seconds']:.3f} s "
        f"(goal before the floor was measured: {GOAL_SECONDS:g} s)"
    )
    figure("peak RSS, full SWORDS", full["peak_rss_mb"], "MB", goal=GOAL_MEGABYTES)
    if tenfold is not None:
        ratio = tenfold["stats_agreement_export_seconds"] / full["stats_agreement_export_seconds"]
        cpu_ratio = _headline_cpu(tenfold) / _headline_cpu(full)
        print(
            f"10x / full time ratio: {ratio:.2f} wall, {cpu_ratio:.2f} CPU "
            f"(labels ratio {tenfold['labels'] / full['labels']:.2f})"
        )
        # CPU time: on a shared box the wall-clock ratio says more about the neighbours' load.
        figure("CPU time at 10x SWORDS / at full SWORDS", cpu_ratio, "x", goal=GOAL_RATIO)
        figure("peak RSS, 10x SWORDS", tenfold["peak_rss_mb"], "MB", goal=GOAL_MEGABYTES)


if __name__ == "__main__":
    main()
