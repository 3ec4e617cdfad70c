"""Exports stream: memory stays bounded whatever the size of the benchmark (docs/design.md §7)."""

import tracemalloc
from pathlib import Path

import pytest

from analysis import services
from annotation.models import Benchmark
from bench.synthetic import build, shape_for

pytestmark = pytest.mark.django_db


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
    for format in ("swords", "labels-csv", "candidates-csv"):
        small_peak, small_size = _peak_while_exporting(small, format, tmp_path / f"small-{format}")
        large_peak, large_size = _peak_while_exporting(large, format, tmp_path / f"large-{format}")
        assert large_size > 4.5 * small_size
        # Five times the rows, not five times the memory.
        assert large_peak < 1.5 * small_peak, (format, small_peak, large_peak)
        if format != "candidates-csv":  # 8,000 candidate rows make a small file; the other two are megabytes
            assert large_peak < 0.6 * large_size, (format, large_peak, large_size)
