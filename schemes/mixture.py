"""A prior of any shape on a candidate's share of accepts: weights on a grid of shares, fitted by EM
to candidates' counts (docs/design.md §13). The adaptive stop of a scheme and the budget planner read
the same prior, so it belongs to no one scheme."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

# Candidates of a source, with two labels or more, before its prior is estimated from them.
MIN_CANDIDATES_FOR_PRIOR = 20
# The shares a mixture prior weighs: 21 points from 0 to 1, the ends pulled in by half a step's
# tenth so that a share of 0 or 1 keeps every outcome possible.
GRID = tuple([0.005] + [step / 20 for step in range(1, 20)] + [0.995])
# EM of a mixture prior: iterations at most, and the largest change of a weight that ends it.
MIXTURE_ITERATIONS = 500
MIXTURE_TOLERANCE = 1e-7
# Weight every grid point keeps, as a share of one candidate: no share is ruled out for good.
MIXTURE_FLOOR = 1e-3


@dataclass(frozen=True)
class MixturePrior:
    """Weights on the shares of ``GRID`` (summing to 1): a prior of any shape on a candidate's share."""

    weights: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.weights) != len(GRID) or any(w < 0 for w in self.weights) or not sum(self.weights) > 0:
            raise ValueError(f"a mixture prior needs {len(GRID)} weights, none negative, not all 0")

    def posterior(self, accepts: int, labels: int) -> list[float]:
        """The weights given ``accepts`` of ``labels``: each times its binomial likelihood, normalised."""
        raw = [w * p**accepts * (1 - p) ** (labels - accepts) for w, p in zip(self.weights, GRID, strict=True)]
        total = sum(raw)
        return [value / total for value in raw]


UNIFORM_MIXTURE = MixturePrior(tuple(1 / len(GRID) for _ in GRID))


def estimate_mixture(counts: Mapping[tuple[int, int], int], *, default: MixturePrior = UNIFORM_MIXTURE) -> MixturePrior:
    """A mixture prior on ``GRID`` fitted by EM to candidates' counts: {(accepts, labels): candidates}.

    The nonparametric maximum likelihood prior (Laird 1978): start uniform; each step gives every
    grid point the mean over candidates of its posterior weight, plus ``MIXTURE_FLOOR`` of a
    candidate; stop when no weight moves by ``MIXTURE_TOLERANCE``, or after ``MIXTURE_ITERATIONS``.
    A stop that reads only the counts so far leaves this likelihood unbiased, so candidates that
    stopped early count as they are. With fewer than ``MIN_CANDIDATES_FOR_PRIOR`` candidates with
    a label, ``default``.
    """
    rows = [(a, n, m) for (a, n), m in counts.items() if n >= 1 and m > 0]
    if sum(m for _, _, m in rows) < MIN_CANDIDATES_FOR_PRIOR:
        return default
    accepts, labels, many = (np.array(column, dtype=np.float64) for column in zip(*rows, strict=True))
    grid = np.array(GRID)
    # Rows: distinct (accepts, labels); columns: the grid's shares.
    likelihood = np.exp(np.outer(accepts, np.log(grid)) + np.outer(labels - accepts, np.log1p(-grid)))
    weights = np.array(UNIFORM_MIXTURE.weights)
    scale = many.sum() + MIXTURE_FLOOR * grid.size
    for _ in range(MIXTURE_ITERATIONS):
        joint = likelihood * weights
        joint *= (many / joint.sum(axis=1))[:, None]
        updated = (joint.sum(axis=0) + MIXTURE_FLOOR) / scale
        moved = float(np.max(np.abs(updated - weights)))
        weights = updated
        if moved < MIXTURE_TOLERANCE:
            break
    return MixturePrior(tuple(float(w) for w in weights / weights.sum()))
