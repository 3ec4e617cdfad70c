"""A benchmark's valid labels and candidates as pandas DataFrames, for a researcher's own analysis:
the rows of the ``labels-csv`` and ``candidates-csv`` exports (``analysis.exports``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from analysis import exports
from annotation.models import Benchmark
from schemes.scores import DEFAULT_THRESHOLDS, ScoreThresholds

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class BenchmarkFrames:
    labels: pd.DataFrame
    candidates: pd.DataFrame


def benchmark_frames(*, benchmark: Benchmark, thresholds: ScoreThresholds = DEFAULT_THRESHOLDS) -> BenchmarkFrames:
    """The benchmark's valid labels and its candidates as pandas DataFrames.

    ``labels`` has one row per valid label (columns ``analysis.exports.LABEL_COLUMNS``: label,
    candidate, target and context ids, the worker as ``kind:external_id`` (not pseudonymised),
    assignment, step,
    value, raw_value, origin, position and time); ``candidates`` one row per candidate
    (``analysis.exports.CANDIDATE_COLUMNS``: ids, target word and part of speech, text, sources
    joined by ``;``, stage, score, accept / reject / abstain counts, labels, category). They hold
    the same rows as the ``labels-csv`` and ``candidates-csv`` exports. Usage::

        frames = benchmark_frames(benchmark=Benchmark.objects.get(name="swords-dev"))
        frames.candidates.groupby("pos")["score"].mean()
    """
    import pandas as pd

    # In-process frames for the researcher's own analysis: workers keep their ids (exports pseudonymise).
    workers = exports.WorkerNames(secret=None)
    labels = pd.DataFrame.from_records(
        exports.label_rows(benchmark=benchmark, workers=workers), columns=list(exports.LABEL_COLUMNS)
    )
    candidates = pd.DataFrame.from_records(
        exports.candidate_rows(benchmark=benchmark, thresholds=thresholds), columns=list(exports.CANDIDATE_COLUMNS)
    )
    return BenchmarkFrames(labels=labels, candidates=candidates)
