"""The review room's figures brought up to date right after a change (``annotation.warm``,
docs/design.md §7, "Figures warmed after a change"): the pipeline's progress with its first page of
target rows, and the live poll's answers, read through the functions the pages call."""

from __future__ import annotations

from annotation.models import Benchmark
from annotation.warm import register_figures_warmer
from review.selectors import TARGET_ROWS_CHUNK, pipeline_progress
from review.views import LIVE_PARTS, live_body


def pipeline_warm(benchmark: Benchmark) -> None:
    """The pipeline's summary (the benchmark page, the live poll) and the rows of the pipeline page's
    first page of targets."""
    progress = pipeline_progress(benchmark=benchmark)
    list(progress.targets[:TARGET_ROWS_CHUNK])


def live_warm(benchmark: Benchmark) -> None:
    """The live poll's answer, alone and with each part the pages ask for."""
    live_body(benchmark=benchmark, parts=[])
    for part in sorted(LIVE_PARTS):
        live_body(benchmark=benchmark, parts=[part])


register_figures_warmer("pipeline", pipeline_warm)
register_figures_warmer("live", live_warm)
