"""The worker-aware figures the exports write beside each row (docs/design.md §13): every candidate's
Dawid-Skene and MACE posteriors (candidates-csv, the dataset folder's candidate table) and every
worker's reliability under both (answers-csv, answers-jsonl).

Both models are fitted over every valid label of the benchmark (or of a split), which takes seconds
where writing the rows takes a fraction of one, so the fits are kept in the shared cache with the
benchmark's change state they were fitted after (``annotation.changes.change_state``), and used
while no change since names a target (``annotation.changes.targets_changed``, the record the
figures kept per target read: docs/design.md §7, "Incremental figures"). Every change of a label,
of its assignment's filtering or of a candidate's exclusion names its targets; a change that names
none (a direct download's entry in the activity log, a role granted, an export job's state) leaves
the fits as they are, where the change key, which every such change moves, would fit them again
after each download. What is kept is what the exports write, already rounded as they write it: a
few numbers a candidate, in arrays.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from django.conf import settings
from django.core.cache import cache

from annotation.changes import WAIT_STEP_SECONDS, ChangeState, change_state, targets_changed
from annotation.models import Benchmark

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
# Decimal places of a posterior or a reliability in an export.
DIGITS = 6


@dataclass(frozen=True)
class ExportFits:
    """The fits' figures as exports write them: ``posteriors`` holds, for each candidate of
    ``candidate_ids`` (ascending), its (Dawid-Skene, MACE) posterior rounded to ``DIGITS`` places,
    NaN for a candidate without a valid label; ``reliability`` the same of each worker of
    ``worker_ids``."""

    candidate_ids: IntArray
    posteriors: FloatArray
    worker_ids: IntArray
    reliability: FloatArray

    def posteriors_of(self, candidate_ids: Sequence[int]) -> tuple[list[float | None], list[float | None]]:
        """The Dawid-Skene and the MACE posterior of each of ``candidate_ids``, in their order: None
        for a candidate without a valid label or unknown to the fits (created since). One look-up
        for them all."""
        values = self._posteriors(candidate_ids)
        # None where NaN, each value a Python float: an array of objects lists them as they are.
        listed = values.astype(object)
        listed[np.isnan(values)] = None
        return listed[:, 0].tolist(), listed[:, 1].tolist()

    def posterior_texts(self, candidate_ids: Sequence[int]) -> tuple[list[str], list[str]]:
        """``posteriors_of`` as ``csv.writer`` writes them: each posterior by its ``str``, an empty
        text for None; each distinct value formatted once."""
        first, second = _texts(self._posteriors(candidate_ids))
        return first, second

    def _posteriors(self, candidate_ids: Sequence[int]) -> FloatArray:
        """(Dawid-Skene, MACE) of each of ``candidate_ids``, a row each, NaN where there is none."""
        wanted = np.asarray(candidate_ids, dtype=np.int64)
        known = self.candidate_ids
        places = np.searchsorted(known, wanted)
        found = places < known.size
        found[found] = known[places[found]] == wanted[found]
        values = np.full((wanted.size, 2), np.nan)
        values[found] = self.posteriors[places[found]]
        return values

    def reliability_by_worker(self) -> dict[int, tuple[float, float]]:
        """Worker id to (Dawid-Skene, MACE) reliability: a benchmark has far fewer workers than labels."""
        return {
            worker: (first, second)
            for worker, (first, second) in zip(self.worker_ids.tolist(), self.reliability.tolist(), strict=True)
        }


def _texts(values: FloatArray) -> tuple[list[str], ...]:
    """Each column of ``values`` as ``csv.writer`` writes a Python float (its ``str``; NaN, which
    stands for None, empty), each distinct value of them formatted once: values told apart by their
    bits, so that -0.0 is never written as 0.0."""
    columns = np.ascontiguousarray(values.T).view(np.int64).tolist()
    distinct = np.array(list(set().union(*columns)), dtype=np.int64)
    texts = {
        bits: "" if value != value else str(value)
        for bits, value in zip(distinct.tolist(), distinct.view(np.float64).tolist(), strict=True)
    }
    return tuple(list(map(texts.__getitem__, column)) for column in columns)


def _rounded(values: FloatArray) -> FloatArray:
    # Python's round, value by value: exact decimal rounding, which numpy's does not promise.
    return np.fromiter((round(float(value), DIGITS) for value in values), dtype=np.float64, count=values.size)


def fitted(*, benchmark: Benchmark, split: str | None = None) -> ExportFits:
    """Both models fitted now over the valid labels of the benchmark (of ``split``)."""
    from analysis.aggregation import METHODS
    from analysis.services.aggregation import benchmark_aggregation
    from analysis.services.reports import benchmark_data

    data = benchmark_data(benchmark=benchmark, split=split)
    fits = [benchmark_aggregation(benchmark=benchmark, method=method, data=data) for method in METHODS]
    candidate_ids = np.asarray(data.table.candidate_ids, dtype=np.int64)
    # The label arrays are let go before the figures are rounded.
    del data
    return ExportFits(
        candidate_ids=candidate_ids,
        posteriors=np.column_stack([_rounded(fit.posterior) for fit in fits]),
        worker_ids=np.asarray(fits[0].worker_ids, dtype=np.int64),
        reliability=np.column_stack([_rounded(fit.reliability) for fit in fits]).reshape(-1, len(fits)),
    )


def export_fits(*, benchmark: Benchmark, split: str | None = None) -> ExportFits:
    """The fits of the benchmark's valid labels (of ``split``) as of now: those kept, when no change
    since they were fitted names a target, else fitted now and kept (at most
    ``BENCHMARK_FIGURES_BASE_MAX_AGE_SECONDS``, beyond which the record of changes is not trusted).

    The change state is read before the labels the fits read, so kept fits are as new as their
    state or newer, never older. While one export fits them, the others wait for its fits (at most
    ``BENCHMARK_FIGURES_WAIT_SECONDS``) rather than each reading every label again."""
    # Named by the benchmark's id and its creation: an id SQLite hands out again after a rollback
    # never finds another benchmark's fits.
    made = benchmark.created_at.timestamp() if benchmark.created_at is not None else ""
    cache_key = f"benchmark-export-fits:{benchmark.pk}:{made}:{'' if split is None else split}"
    now = change_state(benchmark_id=benchmark.pk)
    found = _current(benchmark, cache.get(cache_key), now)
    if found is not None:
        return found
    computing = f"{cache_key}:computing"
    if not cache.add(computing, 1, timeout=settings.BENCHMARK_FIGURES_WAIT_SECONDS):
        deadline = time.monotonic() + settings.BENCHMARK_FIGURES_WAIT_SECONDS
        while time.monotonic() < deadline:
            time.sleep(WAIT_STEP_SECONDS)
            found = _current(benchmark, cache.get(cache_key), now)
            if found is not None:
                return found
            if cache.get(computing) is None:
                break  # the export fitting them failed, or kept fits older than ours: fit here
    try:
        fits = fitted(benchmark=benchmark, split=split)
        cache.set(cache_key, (now, fits), timeout=settings.BENCHMARK_FIGURES_BASE_MAX_AGE_SECONDS)
    finally:
        cache.delete(computing)
    return fits


def _current(benchmark: Benchmark, kept: tuple[ChangeState, ExportFits] | None, now: ChangeState) -> ExportFits | None:
    """The kept fits, if no change between their state and ``now`` names a target."""
    if kept is None:
        return None
    state, fits = kept
    if targets_changed(benchmark_id=benchmark.pk, since=state, now=now) == set():
        return fits
    return None
