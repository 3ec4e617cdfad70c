"""Worker-aware aggregation of a benchmark's valid labels: Dawid-Skene and MACE (docs/design.md §13).

The labels come from the same packed arrays as the statistics (``BenchmarkData``); the answers to
SWORDS controls whose work counts join them as known answers. The SWORDS score stays the
published definition: these posteriors are shown beside it, never instead of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from django.conf import settings

from analysis import aggregation
from analysis.selectors import control_answer_arrays
from analysis.services.reports import BenchmarkData, benchmark_data
from annotation.models import Benchmark
from schemes.scores import ACCEPT, DEFAULT_THRESHOLDS, ScoreThresholds

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class BenchmarkAggregation:
    """One model's posterior P(acceptable) per candidate (in the order of ``candidate_ids``, NaN
    for a candidate without a valid label) and reliability per worker (``worker_ids``); the labels
    that name no worker (imported ones) share ``workerless_reliability`` (None when there are none)."""

    method: str
    candidate_ids: IntArray
    posterior: FloatArray
    worker_ids: IntArray
    reliability: FloatArray
    workerless_reliability: float | None
    prior: float
    iterations: int
    converged: bool
    controls: int

    def posterior_of(self) -> dict[int, float]:
        """Candidate id to posterior, for candidates with labels."""
        known = ~np.isnan(self.posterior)
        return dict(zip(self.candidate_ids[known].tolist(), self.posterior[known].tolist(), strict=True))

    def reliability_of(self) -> dict[int, float]:
        """Worker id to reliability."""
        return dict(zip(self.worker_ids.tolist(), self.reliability.tolist(), strict=True))


def benchmark_aggregation(
    *, benchmark: Benchmark, method: str = aggregation.DAWID_SKENE, data: BenchmarkData | None = None
) -> BenchmarkAggregation:
    """Fit ``method`` to the benchmark's valid labels (the re-annotation left out, as everywhere)
    with the controls as known answers; ``AGGREGATION_MAX_ITERATIONS`` and ``AGGREGATION_TOLERANCE``
    bound the fit."""
    if method not in aggregation.METHODS:
        raise ValueError(f"unknown aggregation method {method!r}; expected one of {', '.join(aggregation.METHODS)}")
    data = data or benchmark_data(benchmark=benchmark)
    table, labels = data.table, data.labels
    n_candidates = int(table.candidate_ids.size)
    n_workers = int(labels.worker_ids.size)
    control_worker, control_accept, control_truth = control_answer_arrays(
        benchmark=benchmark, worker_ids=labels.worker_ids
    )
    votes = aggregation.votes_with_controls(
        candidate=labels.candidate_row,
        worker=labels.worker_row,
        value_accept=labels.value == ACCEPT,
        n_candidates=n_candidates,
        n_workers=n_workers,
        control_worker=control_worker,
        control_accept=control_accept,
        control_truth=control_truth,
    )
    fit = aggregation.aggregate(
        votes,
        method=method,
        max_iterations=settings.AGGREGATION_MAX_ITERATIONS,
        tolerance=settings.AGGREGATION_TOLERANCE,
    )
    posterior = fit.posterior[:n_candidates].copy()
    posterior[table.counts.sum(axis=1) == 0] = np.nan
    workerless = bool(np.any(labels.worker_row < 0))
    return BenchmarkAggregation(
        method=method,
        candidate_ids=table.candidate_ids,
        posterior=posterior,
        worker_ids=labels.worker_ids,
        reliability=fit.reliability[:n_workers],
        workerless_reliability=float(fit.reliability[n_workers]) if workerless else None,
        prior=fit.prior,
        iterations=fit.iterations,
        converged=fit.converged,
        controls=int(control_worker.size),
    )


def posterior_lookup(
    *, benchmark: Benchmark, split: str | None = None
) -> Callable[[int], tuple[float | None, float | None]]:
    """A candidate id's (Dawid-Skene, MACE) posterior, both fitted over the benchmark's (or the
    split's) valid labels; (None, None) for a candidate without a valid label or unknown to the fit.
    Looked up by id in two arrays: no dict of a million entries. The label arrays are let go once
    the fits are made."""
    data = benchmark_data(benchmark=benchmark, split=split)
    fits = [benchmark_aggregation(benchmark=benchmark, method=method, data=data) for method in aggregation.METHODS]
    ids = data.table.candidate_ids
    del data

    def lookup(candidate_id: int) -> tuple[float | None, float | None]:
        place = int(np.searchsorted(ids, candidate_id))
        if place >= ids.size or ids[place] != candidate_id:
            return None, None
        first, second = (float(fit.posterior[place]) for fit in fits)
        return (None if np.isnan(first) else first, None if np.isnan(second) else second)

    return lookup


def candidate_posteriors(
    *, benchmark: Benchmark, candidate_ids: list[int]
) -> dict[int, tuple[float | None, float | None]]:
    """Each of ``candidate_ids``'s (Dawid-Skene, MACE) posterior, fitted over the whole benchmark
    (a candidate's posterior depends on every worker who labelled it)."""
    lookup = posterior_lookup(benchmark=benchmark)
    return {candidate_id: lookup(candidate_id) for candidate_id in candidate_ids}


def aggregation_summary(
    *,
    benchmark: Benchmark,
    method: str,
    thresholds: ScoreThresholds = DEFAULT_THRESHOLDS,
    data: BenchmarkData | None = None,
) -> dict[str, Any]:
    """The statistics' option: candidates acceptable by the posterior (above one half) beside
    those acceptable by the score, how many both call acceptable, and the fit (JSON-ready)."""
    data = data or benchmark_data(benchmark=benchmark)
    fit = benchmark_aggregation(benchmark=benchmark, method=method, data=data)
    counts = data.table.counts
    scored = counts.sum(axis=1) > 0
    by_posterior = scored & (np.nan_to_num(fit.posterior, nan=0.0) > 0.5)
    scores = np.divide(counts[:, 0], counts.sum(axis=1), out=np.zeros(len(counts)), where=scored)
    by_score = scored & (scores > thresholds.acceptable)
    targets = int(data.table.target_ids.size)
    return {
        "method": method,
        "prior": fit.prior,
        "iterations": fit.iterations,
        "converged": fit.converged,
        "controls": fit.controls,
        "workers": int(fit.worker_ids.size),
        "mean_reliability": float(fit.reliability.mean()) if fit.reliability.size else None,
        "acceptable_by_posterior": int(by_posterior.sum()),
        "acceptable_by_score": int(by_score.sum()),
        "acceptable_by_both": int((by_posterior & by_score).sum()),
        "per_target_acceptable_by_posterior": int(by_posterior.sum()) / targets if targets else None,
        "mean_posterior": float(np.nanmean(fit.posterior)) if scored.any() else None,
    }


def worker_rows_with_reliability(*, benchmark: Benchmark, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` (dicts with a ``worker_id``, as the agreement's per-worker rows) with each worker's
    ``reliability_dawid_skene`` and ``reliability_mace`` added (None for a worker without a valid label)."""
    data = benchmark_data(benchmark=benchmark)
    fits = {
        method: benchmark_aggregation(benchmark=benchmark, method=method, data=data).reliability_of()
        for method in aggregation.METHODS
    }
    return [
        {
            **row,
            "reliability_dawid_skene": fits[aggregation.DAWID_SKENE].get(row["worker_id"]),
            "reliability_mace": fits[aggregation.MACE].get(row["worker_id"]),
        }
        for row in rows
    ]
