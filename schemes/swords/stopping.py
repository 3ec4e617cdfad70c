"""When a SWORDS candidate has labels enough: the stopping policies of docs/design.md §13, as pure
functions over a candidate's counts (its accepts ``a`` among its ``n`` valid labels).

A candidate has two decisions, taken on its score a / n (docs/design.md §7): acceptable (score >
0.5) and conceivable (score > 0). The design's maximum ``M`` is ``step2_labels + step3_labels``
(10): what the decisions would be had the candidate all ``M`` labels is what each policy protects.

- ``swords``: ``step2_labels`` labels, then ``step3_labels`` more when ``pass_min_accepts`` of the
  first were accepts (``schemes.swords.pipeline``, SWORDS §3.2).
- ``curtail``: stop once no outcome of the ``M - n`` labels still to come could change either
  decision: the decisions on a / M (every remaining label a non-accept) and on (a + M - n) / M
  (every one an accept) agree, and then agree with a / n too.
- ``adaptive``: a beta-binomial predictive stop. With a Beta(alpha, beta) prior on the candidate's
  share of accepts (one per candidate source, ``estimate_prior``), the accepts K among the
  r = M - n labels still to come follow BetaBinomial(r, alpha + a, beta + n - a); stop once the
  probability that the decisions on (a + K) / M differ from those on a / n is below epsilon, never
  before ``floor`` labels. A decision no outcome can change stops the candidate at any epsilon.

``labels_to_buy`` sizes the next round of a candidate still undecided: the fewest labels after
which some outcome would stop it, so a round never buys a label the candidate could not need.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

SWORDS = "swords"
CURTAIL = "curtail"
ADAPTIVE = "adaptive"

ACCEPTABLE_ABOVE = Fraction(1, 2)
CONCEIVABLE_ABOVE = Fraction(0)
# Candidates of a source, with two labels or more, before its prior is estimated from them.
MIN_CANDIDATES_FOR_PRIOR = 20
# Bounds of the intra-candidate correlation 1 / (alpha + beta + 1) a prior may take: between a
# prior worth about 99 labels and one worth a twentieth of a label.
MIN_CORRELATION = 0.01
MAX_CORRELATION = 0.95


@dataclass(frozen=True)
class Prior:
    """Beta(alpha, beta) on a candidate's share of accepts."""

    alpha: float
    beta: float

    def __post_init__(self) -> None:
        if not (self.alpha > 0 and self.beta > 0):
            raise ValueError("a Beta prior needs alpha > 0 and beta > 0")


# Before a source has data: the uniform prior, which says nothing of where the share lies.
DEFAULT_PRIOR = Prior(1.0, 1.0)


def _check(accepts: int, labels: int, maximum: int) -> None:
    if not 0 <= accepts <= labels:
        raise ValueError(f"accepts ({accepts}) must lie between 0 and the labels ({labels})")
    if maximum < 1:
        raise ValueError("the maximum must be at least 1 label")


def decisions(accepts: int, labels: int) -> tuple[bool, bool]:
    """(acceptable, conceivable) on ``accepts`` of ``labels``; a candidate without labels is neither."""
    if labels == 0:
        return False, False
    score = Fraction(accepts, labels)
    return score > ACCEPTABLE_ABOVE, score > CONCEIVABLE_ABOVE


def curtail_decided(accepts: int, labels: int, *, maximum: int) -> bool:
    """Whether no outcome of the ``maximum - labels`` labels to come can change either decision.

    With M = 10: acceptable is settled at 6 accepts (6/10 > 0.5 whatever follows) or 5 non-accepts
    (at most 5/10); conceivable at the first accept, or at 10 non-accepts.
    """
    _check(accepts, labels, maximum)
    if labels >= maximum:
        return True
    remaining = maximum - labels
    return decisions(accepts, maximum) == decisions(accepts + remaining, maximum)


def swords_decided(accepts: int, labels: int, *, step2_labels: int, pass_min_accepts: int, maximum: int) -> bool:
    """SWORDS's rule on counts alone: decided at ``step2_labels`` labels with fewer than
    ``pass_min_accepts`` accepts (the candidate is dropped), or at the maximum.

    Exact when the labels are counted in order, as the pipeline does with its step-2 accepts;
    ``bench`` uses it to replay the rule."""
    _check(accepts, labels, maximum)
    return labels >= maximum or (labels >= step2_labels and accepts < pass_min_accepts)


def _log_beta(x: float, y: float) -> float:
    return math.lgamma(x) + math.lgamma(y) - math.lgamma(x + y)


def beta_binomial_pmf(k: int, n: int, alpha: float, beta: float) -> float:
    """P(K = k) for K ~ BetaBinomial(n, alpha, beta): C(n, k) B(k + alpha, n - k + beta) / B(alpha, beta)."""
    if not 0 <= k <= n:
        return 0.0
    log_choose = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return math.exp(log_choose + _log_beta(k + alpha, n - k + beta) - _log_beta(alpha, beta))


def change_probability(accepts: int, labels: int, *, maximum: int, prior: Prior) -> float:
    """The predictive probability that the labels still to come (up to ``maximum``) change the
    acceptable or the conceivable decision taken now on ``accepts`` of ``labels``."""
    _check(accepts, labels, maximum)
    remaining = maximum - labels
    if remaining <= 0:
        return 0.0
    now = decisions(accepts, labels)
    alpha, beta = prior.alpha + accepts, prior.beta + labels - accepts
    changed = sum(
        beta_binomial_pmf(k, remaining, alpha, beta)
        for k in range(remaining + 1)
        if decisions(accepts + k, maximum) != now
    )
    return min(1.0, changed)


def adaptive_decided(accepts: int, labels: int, *, maximum: int, prior: Prior, epsilon: float, floor: int) -> bool:
    """Decided at the maximum; before the floor, never; between, once a change is less likely than
    ``epsilon`` or impossible (``curtail_decided``)."""
    _check(accepts, labels, maximum)
    if labels >= maximum:
        return True
    if labels < floor:
        return False
    if curtail_decided(accepts, labels, maximum=maximum):
        return True
    return change_probability(accepts, labels, maximum=maximum, prior=prior) < epsilon


def source_key(sources: Iterable[str]) -> str:
    """The prior a candidate takes: its sources, sorted and joined ("coinco+thesaurus"; "" for none)."""
    return "+".join(sorted({source.casefold() for source in sources}))


def estimate_prior(counts: Iterable[tuple[int, int]], *, default: Prior = DEFAULT_PRIOR) -> Prior:
    """A Beta prior by the method of moments over candidates' (accepts, labels).

    The mean share m is the pooled accepts over labels, smoothed by half a label each way so that
    a source without a single accept keeps a prior. Under a beta-binomial, a candidate's observed
    share a / n has variance m (1 - m) (rho + (1 - rho) / n), rho = 1 / (alpha + beta + 1), so
    rho = (S / (m (1 - m)) - mean(1/n)) / (1 - mean(1/n)) from the observed spread S of the
    shares. Candidates with fewer than two labels say nothing of the spread and are left out;
    with fewer than ``MIN_CANDIDATES_FOR_PRIOR`` left, ``default``.
    """
    rows = [(a, n) for a, n in counts if n >= 2]
    if len(rows) < MIN_CANDIDATES_FOR_PRIOR:
        return default
    accepts = sum(a for a, _ in rows)
    labels = sum(n for _, n in rows)
    mean = (accepts + 0.5) / (labels + 1)
    inverse_n = sum(1 / n for _, n in rows) / len(rows)
    spread = sum((a / n - mean) ** 2 for a, n in rows) / len(rows)
    rho = (spread / (mean * (1 - mean)) - inverse_n) / (1 - inverse_n)
    rho = min(MAX_CORRELATION, max(MIN_CORRELATION, rho))
    strength = 1 / rho - 1
    return Prior(mean * strength, (1 - mean) * strength)


@dataclass(frozen=True)
class StoppingRule:
    """A policy other than swords, with what it needs: the design's maximum, and for adaptive its
    epsilon, floor and priors by source key (``DEFAULT_PRIOR`` for a source without one)."""

    policy: str
    maximum: int
    epsilon: float = 0.0
    floor: int = 1
    priors: Mapping[str, Prior] = field(default_factory=dict)
    # Answers by (accepts, labels, source): a refresh asks the same counts of many candidates.
    _memo: dict[tuple[int, int, str], bool] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.policy not in (CURTAIL, ADAPTIVE):
            raise ValueError(f"a stopping rule is curtail or adaptive, not {self.policy!r}")
        if self.maximum < 1:
            raise ValueError("the maximum must be at least 1 label")

    def prior(self, source: str) -> Prior:
        return self.priors.get(source, DEFAULT_PRIOR)

    def decided(self, accepts: int, labels: int, source: str = "") -> bool:
        key = (accepts, labels, source)
        if key not in self._memo:
            if self.policy == CURTAIL:
                self._memo[key] = curtail_decided(accepts, labels, maximum=self.maximum)
            else:
                self._memo[key] = adaptive_decided(
                    accepts,
                    labels,
                    maximum=self.maximum,
                    prior=self.prior(source),
                    epsilon=self.epsilon,
                    floor=self.floor,
                )
        return self._memo[key]

    def labels_to_buy(self, accepts: int, labels: int, source: str = "") -> int:
        """The next round of an undecided candidate: the fewest further labels k for which some
        outcome (j accepts of the k) decides it; 0 once decided."""
        if self.decided(accepts, labels, source):
            return 0
        remaining = self.maximum - labels
        for k in range(1, remaining):
            if any(self.decided(accepts + j, labels + k, source) for j in range(k + 1)):
                return k
        return remaining
