"""The annotation room's figures brought up to date right after a change (``annotation.warm``,
docs/design.md §7, "Figures warmed after a change"): the benchmark page's counts and import list."""

from __future__ import annotations

from annotation.models import Benchmark
from annotation.selectors import benchmark_counts, import_list
from annotation.warm import register_figures_warmer


def counts_warm(benchmark: Benchmark) -> None:
    benchmark_counts(benchmark=benchmark)


def imports_warm(benchmark: Benchmark) -> None:
    import_list(benchmark=benchmark)


register_figures_warmer("counts", counts_warm)
register_figures_warmer("imports", imports_warm)
