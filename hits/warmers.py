"""The collecting room's figures brought up to date right after a change (``annotation.warm``,
docs/design.md §7, "Figures warmed after a change"): the progress of every batch (the benchmark
page, the batch list, each batch's page and its poll) and the budget the benchmark page shows, read
through the functions the pages call."""

from __future__ import annotations

from annotation.models import Benchmark
from annotation.warm import register_figures_warmer
from hits.budget import budget_status_shown
from hits.selectors.researcher import benchmark_batches_progress
from hits.templatetags.hits_tags import batch_table


def batches_warm(benchmark: Benchmark) -> None:
    """The progress of every batch of the benchmark, which the benchmark page's batches, the batch
    list, each batch's page and its live poll read (``batches_progress``), and the benchmark page's
    batches with their throughput."""
    benchmark_batches_progress(benchmark_id=benchmark.pk)
    batch_table(benchmark)


def budget_warm(benchmark: Benchmark) -> None:
    """The benchmark page's budget and burn-down."""
    budget_status_shown(benchmark=benchmark)


register_figures_warmer("batches", batches_warm)
register_figures_warmer("budget", budget_warm)
