"""The analysis room's figures brought up to date right after a change (``annotation.warm``,
docs/design.md §7, "Figures warmed after a change"): each warmer reads them through the functions
its page calls, under the same names, so the page finds them in the cache."""

from __future__ import annotations

from analysis import services
from analysis.adjudication.selectors import disagreement_queue
from analysis.api.exports import direct_export_labels
from analysis.background import background_figures_refresh
from analysis.figures import scheme_figures
from analysis.statistics_page import statistics_page_context
from annotation.models import Benchmark
from annotation.warm import register_figures_warmer


def statistics_background_warm(benchmark: Benchmark) -> None:
    """The statistics page's figures computed in the background (agreement, the filter audit), for
    the change key now: first, so the page's figures below are built with them. Only after a change
    that names every target: after a refresh the page queues them when it is read, as before."""
    for name in scheme_figures(benchmark).background:
        background_figures_refresh(benchmark_id=benchmark.pk, name=name)


def statistics_warm(benchmark: Benchmark) -> None:
    """What the statistics page reads (``analysis.views.benchmark_statistics``)."""
    statistics_page_context(benchmark)


def statistics_rows_warm(benchmark: Benchmark) -> None:
    """The statistics' rows kept per target (and the sources' table beside them), after a refresh:
    the page sums Table 2 from them without reading the changed targets again."""
    if services.statistics_kept(benchmark=benchmark):
        services.benchmark_statistics_kept(benchmark=benchmark)


def evaluation_warm(benchmark: Benchmark) -> None:
    """What the evaluation page reads: the oracle row of each leaderboard and the benchmark's version."""
    try:
        services.evaluation_check(benchmark=benchmark)
    except services.EvaluationUnavailable:
        return
    services.benchmark_version_now(benchmark=benchmark)
    for split in [None, *services.benchmark_splits(benchmark=benchmark)]:
        services.benchmark_leaderboard(benchmark=benchmark, split=split)


def exports_warm(benchmark: Benchmark) -> None:
    """The count of valid labels the exports page offers direct downloads by."""
    direct_export_labels(benchmark=benchmark)


def adjudication_warm(benchmark: Benchmark) -> None:
    """The disagreement of each target the adjudication queue sorts, kept per target."""
    disagreement_queue(benchmark=benchmark)


# The quick ones first: agreement's bootstrap takes longest, and the statistics page waits for it.
register_figures_warmer("statistics-rows", statistics_rows_warm)
# The evaluation stores the lemmas of candidates it finds without one (annotation.wordnet.stored).
register_figures_warmer("evaluation", evaluation_warm, writes=True)
register_figures_warmer("adjudication", adjudication_warm)
register_figures_warmer("exports", exports_warm)
register_figures_warmer("statistics-background", statistics_background_warm, after_refresh=False)
register_figures_warmer("statistics", statistics_warm, after_refresh=False)
