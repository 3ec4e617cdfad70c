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
from typing import Any

import numpy as np
import numpy.typing as npt

from analysis.slices import label_slices, slice_rows

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
# Item and worker rows of labels, as narrow as the caller keeps them (label_arrays: 32 bits).
RowArray = npt.NDArray[np.signedinteger[Any]]

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

    item: RowArray
    worker: RowArray
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
    # 32-bit rows, as label_arrays packs them: one copy of the labels at four bytes a column.
    return Votes(
        item=np.concatenate(
            [np.asarray(candidate, dtype=np.int32), np.arange(n_candidates, n_candidates + controls, dtype=np.int32)]
        ),
        worker=np.concatenate([np.asarray(worker, dtype=np.int32), control_worker.astype(np.int32)]),
        accept=np.concatenate([np.asarray(value_accept, dtype=bool), np.asarray(control_accept, dtype=bool)]),
        truth=np.concatenate([np.full(n_candidates, UNKNOWN, dtype=np.int64), control_truth]),
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
    # Each E-step writes into the array the posterior before last used, and the change is measured
    # in a third: an iteration allocates nothing the size of the items.
    spare, change_buffer = np.empty_like(posterior), np.empty_like(posterior)
    iterations, converged = 0, False
    while iterations < max_iterations:
        iterations += 1
        if method == DAWID_SKENE:
            fit.dawid_skene_m(posterior)
            updated = fit.dawid_skene_e(out=spare)
        else:
            fit.mace_m(posterior)
            updated = fit.mace_e(out=spare)
        change = 0.0
        if updated.size:
            np.subtract(updated, posterior, out=change_buffer)
            change = float(np.abs(change_buffer, out=change_buffer).max())
        posterior, spare = updated, posterior
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
    """The state of one EM fit. Labels are kept as two narrow columns (item, worker x 2 + label);
    an iteration is one pass over them per step, a slice at a time through two buffers of a slice
    made once (docs/analysis.md, "Worker-aware aggregation"): the E-step adds each label's value
    of its cell into its item, the M-step each label's item posterior into its cell (``np.add.at``,
    in label order)."""

    def __init__(self, votes: Votes, smoothing: float) -> None:
        self.votes = votes
        self.smoothing = smoothing
        # Workerless labels share the pooled row at n_workers.
        workers = votes.n_workers + 1
        self.workers = workers
        # One narrow column of cells, worker x 2 + label; workerless labels in the pooled row.
        self.cell = np.where(votes.worker < 0, votes.n_workers, votes.worker).astype(np.int32)
        self.cell *= 2
        self.cell += votes.accept
        self.item = votes.item
        # A slice's rows widened for np.take, and the values they pick: reused at every pass.
        size = min(slice_rows(), self.cell.size)
        self.rows = np.empty(size, dtype=np.intp)
        self.values = np.empty(size)
        # Labels per (worker, label) cell, fixed for the fit.
        cell_labels = np.zeros(workers * 2)
        for part in label_slices(self.cell.size):
            np.add.at(cell_labels, self.cell[part], 1.0)
        self.cell_labels = cell_labels.reshape(workers, 2)
        self.known = np.flatnonzero(votes.truth != UNKNOWN)
        self.known_value = votes.truth[self.known].astype(np.float64)
        self.prior = 0.5
        # Dawid-Skene: P(label = accept | class) per worker, for class 0 and class 1.
        self.accept_given = np.full((workers, 2), 0.5)
        # MACE: competence and the spamming strategy's P(accept).
        self.theta = np.full(workers, 0.5)
        self.strategy = np.full(workers, 0.5)

    def start(self) -> FloatArray:
        """The share of accepts of each item (the prior, 0.5, for an item without a label)."""
        accept = self.cell_accept_table()
        labels = self._item_sums(np.ones(self.workers * 2), np.empty(self.votes.n_items))
        accepts = self._item_sums(accept, np.empty(self.votes.n_items))
        posterior = np.where(labels > 0, accepts / np.maximum(labels, 1), 0.5)
        return self._clamp(posterior)

    def cell_accept_table(self) -> FloatArray:
        """1 for the accept cells, 0 for the reject cells."""
        table = np.zeros(self.workers * 2)
        table[1::2] = 1.0
        return table

    def _spread(self, source: FloatArray, index: RowArray, into: FloatArray, at: RowArray) -> None:
        """For every label, add ``source[index]`` into ``into[at]``: a slice of labels at a time."""
        for part in label_slices(index.size):
            rows, values = self.rows[: part.stop - part.start], self.values[: part.stop - part.start]
            np.copyto(rows, index[part])
            np.take(source, rows, out=values)
            np.add.at(into, at[part], values)

    def _item_sums(self, per_cell: FloatArray, out: FloatArray) -> FloatArray:
        """Sum over each item's labels of a value per cell, into ``out``."""
        out.fill(0.0)
        self._spread(per_cell, self.cell, out, self.item)
        return out

    def _accept_weight(self, posterior: FloatArray) -> FloatArray:
        """Sum of P(class 1) of the items of each (worker, label) cell: a workers x 2 table
        (column 1: accept). With ``cell_labels`` it gives every expected count the M-steps need,
        because a cell's parameters are the same for all its labels: one pass over the labels."""
        sums = np.zeros(self.workers * 2)
        self._spread(posterior, self.item, sums, self.cell)
        return sums.reshape(self.workers, 2)

    def _clamp(self, posterior: FloatArray) -> FloatArray:
        if self.known.size:
            posterior[self.known] = self.known_value
        return posterior

    def _prior(self, posterior: FloatArray) -> None:
        # Items with labels and known items inform the class share; smoothed towards a half.
        n = posterior.size
        self.prior = float((posterior.sum() + self.smoothing) / (n + 2 * self.smoothing)) if n else 0.5

    def _posterior(self, cell_log_odds: FloatArray, out: FloatArray) -> FloatArray:
        """P(class 1) per item, into ``out``, from each cell's log P(label | 1) - log P(label | 0)
        summed per item with the prior's: the logistic of the log odds, worked in place. The sums
        start from the prior's negated log odds and add the cells' negated ones, so the logistic
        needs no pass to add the prior and none to negate."""
        out.fill(-np.log(self.prior / (1 - self.prior)))
        self._spread(-cell_log_odds, self.cell, out, self.item)
        np.clip(out, -700, 700, out=out)
        np.exp(out, out=out)
        out += 1.0
        return self._clamp(np.reciprocal(out, out=out))

    # --- Dawid-Skene ------------------------------------------------------------------------

    def dawid_skene_m(self, posterior: FloatArray) -> None:
        self._prior(posterior)
        one = self._accept_weight(posterior)
        zero = self.cell_labels - one
        s = self.smoothing
        self.accept_given[:, 1] = (one[:, 1] + s) / (one.sum(axis=1) + 2 * s)
        self.accept_given[:, 0] = (zero[:, 1] + s) / (zero.sum(axis=1) + 2 * s)

    def dawid_skene_e(self, out: FloatArray) -> FloatArray:
        accept = np.clip(self.accept_given, _FLOOR, 1 - _FLOOR)
        log_odds = np.empty(self.workers * 2)
        log_odds[0::2] = np.log(1 - accept[:, 1]) - np.log(1 - accept[:, 0])  # a reject
        log_odds[1::2] = np.log(accept[:, 1]) - np.log(accept[:, 0])  # an accept
        return self._posterior(log_odds, out)

    def dawid_skene_reliability(self) -> FloatArray:
        """Youden's J: P(accept | acceptable) - P(accept | not acceptable)."""
        return self.accept_given[:, 1] - self.accept_given[:, 0]

    # --- MACE -------------------------------------------------------------------------------

    def _mace_label_probabilities(self) -> FloatArray:
        """P(label | class) per (worker, label) cell: a (workers x 2) x 2 table, column = class.
        A label is a spamming draw with probability 1 - theta, plus theta where it equals the class."""
        spam_reject = (1 - self.theta) * (1 - self.strategy)
        spam_accept = (1 - self.theta) * self.strategy
        table = np.empty((self.workers * 2, 2))
        table[0::2, 0] = spam_reject + self.theta
        table[0::2, 1] = spam_reject
        table[1::2, 0] = spam_accept
        table[1::2, 1] = spam_accept + self.theta
        return np.clip(table, _FLOOR, 1.0, out=table)

    def mace_m(self, posterior: FloatArray) -> None:
        self._prior(posterior)
        table = self._mace_label_probabilities()
        one = self._accept_weight(posterior)
        # Expected labels given honestly: where the label equals the class, the share of its
        # probability that competence explains; every other label was a spamming draw. A reject
        # matches the class with weight P(class 0), an accept with P(class 1).
        honest = np.empty((self.workers, 2))
        honest[:, 0] = (self.cell_labels[:, 0] - one[:, 0]) * self.theta / table[0::2, 0]
        honest[:, 1] = one[:, 1] * self.theta / table[1::2, 1]
        spam = self.cell_labels - honest
        s = self.smoothing
        self.theta = (honest.sum(axis=1) + s) / (self.cell_labels.sum(axis=1) + 2 * s)
        self.strategy = (spam[:, 1] + s) / (spam.sum(axis=1) + 2 * s)

    def mace_e(self, out: FloatArray) -> FloatArray:
        table = np.log(self._mace_label_probabilities())
        return self._posterior(table[:, 1] - table[:, 0], out)
