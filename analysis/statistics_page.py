"""The statistics page's context (docs/design.md §7): the scheme's figures with the interactions and
the source yield, kept for a change of the benchmark in one entry, and what the scheme draws from
figures computed in the background added on each request."""

from __future__ import annotations

from typing import Any

from analysis.figures import StatisticsOptions, flat_figures, scheme_figures
from analysis.services.sources import benchmark_source_yield
from annotation.changes import benchmark_cached, figures_key
from annotation.models import Benchmark
from review.selectors import interaction_summary

#: The statistics page's figures kept for a change of the benchmark (``benchmark_cached``): the
#: scheme's own with the interactions and the source yield, in one entry.
STATISTICS_PAGE = "statistics-page-whole"


def statistics_page_context(benchmark: Benchmark, *, key: str | None = None) -> dict[str, Any]:
    """The statistics page's context: the scheme's own (``page_context``), or every figure as a row
    and the names of its plots (``analysis/scheme_statistics.html``), with the interactions and the
    source yield, computed once per change of the benchmark (``annotation.changes``) in one
    computation: its figures read every label. What the scheme draws from figures computed in the
    background (``background_context``) is added on each request, from their own entry. ``key``:
    the benchmark's figures key when the request has read it already."""
    figures = scheme_figures(benchmark)
    key = key if key is not None else figures_key(benchmark_id=benchmark.pk)
    context = benchmark_cached(
        benchmark=benchmark, name=STATISTICS_PAGE, compute=lambda: _statistics_page_context(benchmark), key=key
    )
    if figures.background_context is not None:
        # The figures key ends with its period: what comes before it is the change key.
        context = {**context, **figures.background_context(benchmark, context, key.rsplit(".", 1)[0])}
    return {**context, "benchmark": benchmark}


def _statistics_page_context(benchmark: Benchmark) -> dict[str, Any]:
    figures = scheme_figures(benchmark)
    if figures.page_context is not None:
        context = figures.page_context(benchmark)
    else:
        statistics = figures.statistics(benchmark, StatisticsOptions())
        context = {"benchmark": benchmark, "rows": list(flat_figures(statistics)), "plot_names": list(figures.plots)}
    return {
        **context,
        "interaction": interaction_summary(benchmark=benchmark),
        "source_yield": benchmark_source_yield(benchmark=benchmark),
    }
