"""Worker-aware aggregation beside the SWORDS score: Dawid-Skene and MACE (docs/design.md §13).

Pure functions over the packed label arrays the analysis already builds (one item row, one worker
row and one value per label), numpy only. Both models are fitted by EM with a fixed iteration cap
and tolerance, from a deterministic start (the share of accepts), so a fit repeats exactly.

**Classes.** An item's true class is binary, acceptable (1) or not (0), and each label is read as
accept against not-accept: abstain counts as not-accept, as it does in the score (docs/design.md
§7). A three-valued truth would make abstain a property of the candidate, which it is not: it is
a worker's uncertainty. The posterior ``P(accept)`` of a candidate therefore sits on the same
scale as its score and is compared with it directly.

**Known answers.** Control items (the target's own copy must be accepted, the distractor must not)
enter as items whose class is known: their posterior is held at the known class, so they anchor
each worker's reliability without being estimated themselves.

**Labels without a worker** (imported releases name none) share one pooled worker, the last row
of ``reliability``, so they still count, with one confusion matrix between them.

- Dawid & Skene (1979): each worker has a confusion matrix ``P(label | true class)``; the
  reliability reported is Youden's J, sensitivity + specificity - 1: 1 for a perfect worker, 0
  for one whose label does not depend on the truth (a spammer who always accepts, a coin flipper).
- MACE, Hovy et al. (2013): each label is the truth with probability ``theta`` (the worker's
  competence, reported as reliability) or else a draw from the worker's own spamming strategy.
  The class prior is estimated as in Dawid-Skene rather than held uniform: few candidates are
  acceptable (about 6 % in SWORDS), and a uniform prior would lift every posterior.

Parameters are smoothed by ``smoothing`` pseudo-counts (a Dirichlet / beta prior), so a worker
with one label gets no 0 or 1 probability.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Value of ``truth`` for an item whose class is to be estimated.
UNKNOWN = -1
DAWID_SKENE, MACE = "dawid_skene", "mace"
METHODS = (DAWID_SKENE, MACE)
# Defaults of the settings AGGREGATION_MAX_ITERATIONS and AGGREGATION_TOLERANCE.
MAX_ITERATIONS = 1000
TOLERANCE = 1e-6
SMOOTHING = 0.5
# Log of a probability is never taken below this (a smoothed parameter never reaches 0).
_FLOOR = 1e-12


@dataclass(frozen=True)
class Votes:
    """Labels as aggregation reads them.

    ``item`` (0..n_items-1), ``worker`` (0..n_workers-1, or -1 for none) and ``accept`` (bool) per
    label; ``truth`` per item: UNKNOWN, or 0 / 1 for a known answer (a control).
    """

    item: IntArray
    worker: IntArray
    accept: npt.NDArray[np.bool_]
    truth: IntArray
    n_workers: int

    def __post_init__(self) -> None:
        if not (self.item.shape == self.worker.shape == self.accept.shape):
            raise ValueError("item, worker and accept need one entry per label")
        if self.item.size and (self.item.min() < 0 or self.item.max() >= self.truth.size):
            raise ValueError("an item row is out of range")
        if self.worker.size and (self.worker.min() < -1 or self.worker.max() >= self.n_workers):
            raise ValueError("a worker row is out of range")
        if np.any((self.truth != UNKNOWN) & (self.truth != 0) & (self.truth != 1)):
            raise ValueError("a known answer must be 0 (not accept) or 1 (accept)")

    @property
    def n_items(self) -> int:
        return int(self.truth.size)


@dataclass(frozen=True)
class Aggregate:
    """A fitted model: ``posterior`` P(acceptable) per item (known items at their class, items
    without a label at the prior), ``reliability`` per worker (one more row, last, for the labels
    without a worker), the estimated share of acceptable items, and how the fit ended."""

    method: str
    posterior: FloatArray
    reliability: FloatArray
    prior: float
    iterations: int
    converged: bool


def votes_with_controls(
    *,
    candidate: npt.ArrayLike,
    worker: npt.ArrayLike,
    value_accept: npt.ArrayLike,
    n_candidates: int,
    n_workers: int,
    control_worker: npt.ArrayLike = (),
    control_accept: npt.ArrayLike = (),
    control_truth: npt.ArrayLike = (),
) -> Votes:
    """Votes on ``n_candidates`` candidates (classes unknown) followed by one known item per
    control answer (``control_truth``: 1 for a copy of the target, 0 for a distractor)."""
    control_worker = np.asarray(control_worker, dtype=np.int64)
    control_truth = np.asarray(control_truth, dtype=np.int64)
    if not (control_worker.shape == control_truth.shape == np.shape(control_accept)):
        raise ValueError("one worker, answer and known answer per control answer are needed")
    controls = control_worker.size
    return Votes(
        item=np.r_[np.asarray(candidate, dtype=np.int64), n_candidates + np.arange(controls, dtype=np.int64)],
        worker=np.r_[np.asarray(worker, dtype=np.int64), control_worker],
        accept=np.r_[np.asarray(value_accept, dtype=bool), np.asarray(control_accept, dtype=bool)],
        truth=np.r_[np.full(n_candidates, UNKNOWN, dtype=np.int64), control_truth],
        n_workers=n_workers,
    )


def aggregate(
    votes: Votes,
    *,
    method: str,
    max_iterations: int = MAX_ITERATIONS,
    tolerance: float = TOLERANCE,
    smoothing: float = SMOOTHING,
) -> Aggregate:
    """Fit ``method`` (DAWID_SKENE or MACE) by EM; stops when no posterior moves by more than
    ``tolerance`` in an iteration, or after ``max_iterations``."""
    if method not in METHODS:
        raise ValueError(f"unknown aggregation method {method!r}; expected one of {', '.join(METHODS)}")
    if max_iterations < 1 or tolerance <= 0 or smoothing <= 0:
        raise ValueError("max_iterations must be at least 1, tolerance and smoothing above 0")
    fit = _Fit(votes, smoothing)
    posterior = fit.start()
    iterations, converged = 0, False
    while iterations < max_iterations:
        iterations += 1
        if method == DAWID_SKENE:
            fit.dawid_skene_m(posterior)
            updated = fit.dawid_skene_e()
        else:
            fit.mace_m(posterior)
            updated = fit.mace_e()
        change = float(np.max(np.abs(updated - posterior))) if updated.size else 0.0
        posterior = updated
        if change < tolerance:
            converged = True
            break
    reliability = fit.dawid_skene_reliability() if method == DAWID_SKENE else fit.theta.copy()
    return Aggregate(
        method=method,
        posterior=posterior,
        reliability=reliability,
        prior=fit.prior,
        iterations=iterations,
        converged=converged,
    )


class _Fit:
    """The state of one EM fit. Labels are kept as two narrow columns (item, worker x 2 + label)
    so an iteration is a handful of bincounts over them: memory is a few arrays of one float a label."""

    def __init__(self, votes: Votes, smoothing: float) -> None:
        self.votes = votes
        self.smoothing = smoothing
        # Workerless labels share the pooled row at n_workers.
        workers = votes.n_workers + 1
        self.workers = workers
        worker = np.where(votes.worker < 0, votes.n_workers, votes.worker)
        self.item = votes.item.astype(np.int64)
        self.cell = (worker * 2 + votes.accept.astype(np.int64)).astype(np.int64)
        self.known = votes.truth != UNKNOWN
        self.known_value = votes.truth[self.known].astype(np.float64)
        self.prior = 0.5
        # Dawid-Skene: P(label = accept | class) per worker, for class 0 and class 1.
        self.accept_given = np.full((workers, 2), 0.5)
        # MACE: competence and the spamming strategy's P(accept).
        self.theta = np.full(workers, 0.5)
        self.strategy = np.full(workers, 0.5)

    def start(self) -> FloatArray:
        """The share of accepts of each item (the prior, 0.5, for an item without a label)."""
        n = self.votes.n_items
        labels = np.bincount(self.item, minlength=n).astype(np.float64)
        accepts = np.bincount(self.item, weights=self.votes.accept.astype(np.float64), minlength=n)
        posterior = np.where(labels > 0, accepts / np.maximum(labels, 1), 0.5)
        return self._clamp(posterior)

    def _clamp(self, posterior: FloatArray) -> FloatArray:
        posterior[self.known] = self.known_value
        return posterior

    def _prior(self, posterior: FloatArray) -> None:
        # Items with labels and known items inform the class share; smoothed towards a half.
        n = posterior.size
        self.prior = float((posterior.sum() + self.smoothing) / (n + 2 * self.smoothing)) if n else 0.5

    def _cell_sums(self, weights: FloatArray) -> FloatArray:
        """Sum of ``weights`` per (worker, label) cell: a workers x 2 table (column 1: accept)."""
        sums = np.bincount(self.cell, weights=weights, minlength=self.workers * 2)
        return sums.astype(np.float64).reshape(self.workers, 2)

    def _posterior(self, log_one: FloatArray, log_zero: FloatArray) -> FloatArray:
        """P(class 1) per item from the per-label log-likelihoods of each class."""
        n = self.votes.n_items
        one = np.log(self.prior) + np.bincount(self.item, weights=log_one, minlength=n)
        zero = np.log(1 - self.prior) + np.bincount(self.item, weights=log_zero, minlength=n)
        posterior = 1.0 / (1.0 + np.exp(np.clip(zero - one, -700, 700)))
        return self._clamp(posterior)

    # --- Dawid-Skene ------------------------------------------------------------------------

    def dawid_skene_m(self, posterior: FloatArray) -> None:
        self._prior(posterior)
        weight_one = posterior[self.item]
        one = self._cell_sums(weight_one)
        zero = self._cell_sums(1.0 - weight_one)
        s = self.smoothing
        self.accept_given[:, 1] = (one[:, 1] + s) / (one.sum(axis=1) + 2 * s)
        self.accept_given[:, 0] = (zero[:, 1] + s) / (zero.sum(axis=1) + 2 * s)

    def dawid_skene_e(self) -> FloatArray:
        # log P(label | class) of every (worker, label) cell, then gathered per label.
        table = np.empty((self.workers * 2, 2))
        for truth in (0, 1):
            accept = np.clip(self.accept_given[:, truth], _FLOOR, 1 - _FLOOR)
            table[0::2, truth] = np.log(1 - accept)
            table[1::2, truth] = np.log(accept)
        return self._posterior(table[self.cell, 1], table[self.cell, 0])

    def dawid_skene_reliability(self) -> FloatArray:
        """Youden's J: P(accept | acceptable) - P(accept | not acceptable)."""
        return self.accept_given[:, 1] - self.accept_given[:, 0]

    # --- MACE -------------------------------------------------------------------------------

    def _mace_label_probabilities(self) -> FloatArray:
        """P(label | class) per (worker, label) cell: a (workers x 2) x 2 table, column = class."""
        table = np.empty((self.workers * 2, 2))
        for truth in (0, 1):
            for label in (0, 1):
                spam = (1 - self.theta) * (self.strategy if label == 1 else 1 - self.strategy)
                table[label::2, truth] = spam + self.theta * (label == truth)
        return np.clip(table, _FLOOR, 1.0)

    def mace_m(self, posterior: FloatArray) -> None:
        self._prior(posterior)
        table = self._mace_label_probabilities()
        weight_one = posterior[self.item]
        # Expected labels given honestly: where the label equals the class, the share of its
        # probability that competence explains; every other label was a spamming draw.
        honest_given = np.empty(self.workers * 2)
        honest_given[0::2] = self.theta / table[0::2, 0]  # label 0, class 0
        honest_given[1::2] = self.theta / table[1::2, 1]  # label 1, class 1
        label_one = self.cell % 2 == 1
        matches = np.where(label_one, weight_one, 1.0 - weight_one)
        honest = matches * honest_given[self.cell]
        honest_cells = self._cell_sums(honest)
        spam_cells = self._cell_sums(1.0 - honest)
        s = self.smoothing
        labels = honest_cells.sum(axis=1) + spam_cells.sum(axis=1)
        self.theta = (honest_cells.sum(axis=1) + s) / (labels + 2 * s)
        self.strategy = (spam_cells[:, 1] + s) / (spam_cells.sum(axis=1) + 2 * s)

    def mace_e(self) -> FloatArray:
        table = np.log(self._mace_label_probabilities())
        return self._posterior(table[self.cell, 1], table[self.cell, 0])
