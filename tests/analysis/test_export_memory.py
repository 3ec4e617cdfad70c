"""Exports stream: memory stays bounded whatever the size of the benchmark (docs/design.md §7)."""

import tracemalloc
from pathlib import Path

import pytest

from analysis import services
from annotation.models import Benchmark
from bench.synthetic import build, shape_for

pytestmark = pytest.mark.django_db

SIZES = (("small", 1500, 1), ("large", 8000, 2))


def _peak_while_exporting(benchmark: Benchmark, format: str, path: Path) -> tuple[int, int]:
    """Peak traced memory while writing the export, and the size of what was written."""
    tracemalloc.start()
    try:
        services.benchmark_export_to_path(benchmark=benchmark, format=format, path=path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, path.stat().st_size


def test_exports_hold_a_chunk_of_rows_in_memory_never_the_file(tmp_path: Path) -> None:
    small = build(name="small", shape=shape_for(1500, workers=40), seed=1)
    large = build(name="large", shape=shape_for(8000, workers=40), seed=2)
    for format in ("swords", "labels-csv"):
        small_peak, small_size = _peak_while_exporting(small, format, tmp_path / f"small-{format}")
        large_peak, large_size = _peak_while_exporting(large, format, tmp_path / f"large-{format}")
        assert large_size > 4.5 * small_size
        # Five times the rows, not five times the memory.
        assert large_peak < 1.5 * small_peak, (format, small_peak, large_peak)
        assert large_peak < 0.6 * large_size, (format, large_peak, large_size)


def _peak_of_statistics(benchmark: Benchmark) -> int:
    tracemalloc.start()
    try:
        services.benchmark_statistics(benchmark=benchmark)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


def test_the_candidate_table_holds_the_packed_labels_as_the_statistics_do(tmp_path: Path) -> None:
    # Its posteriors are fitted over every label (docs/analysis.md, "Worker-aware aggregation"): it
    # holds the narrow label arrays the statistics load, and a few numbers a candidate, never the file
    # or a row object per label.
    benchmarks = [build(name=name, shape=shape_for(size, workers=40), seed=seed) for name, size, seed in SIZES]
    # Once unmeasured: the first run imports the modules (pandas among them), which tracemalloc counts.
    _peak_while_exporting(benchmarks[0], "candidates-csv", tmp_path / "warm")
    _peak_of_statistics(benchmarks[0])
    for benchmark in benchmarks:
        name = benchmark.name
        peak, _ = _peak_while_exporting(benchmark, "candidates-csv", tmp_path / name)
        statistics = _peak_of_statistics(benchmark)
        assert peak < 1.5 * statistics, (name, peak, statistics)
