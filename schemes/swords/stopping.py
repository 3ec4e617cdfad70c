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
- ``adaptive``: a Bayesian predictive stop. With a prior on the candidate's share of accepts (one
  per candidate source), the accepts K among the r = M - n labels still to come follow the
  posterior predictive; stop once the probability that the decisions on (a + K) / M differ from
  those on a / n is below epsilon, never before ``floor`` labels. A decision no outcome can change
  stops the candidate at any epsilon. Two priors (docs/design.md §13, ``adaptive_prior``):

  - ``beta``: a Beta(alpha, beta) by the method of moments (``estimate_prior``), K ~
    BetaBinomial(r, alpha + a, beta + n - a), one epsilon for a change of either decision;
  - ``mixture``: weights on a grid of shares (``GRID``) fitted by EM to the counts so far
    (``estimate_mixture``, the nonparametric maximum likelihood prior). A source's shares are
    two-humped (most thesaurus entries nobody accepts, a few most do), which one Beta cannot
    hold; and the likelihood, unlike the moments, is not biased by candidates that stopped early.
    Acceptable and conceivable each have their epsilon (``epsilon``, ``epsilon_conceivable``): a
    conceivable set is five times the acceptable one, so one miss costs it less.

  The counts may be raw (accepts among valid labels) or weighted by each worker's reliability
  (``weighted_counts``, ``adaptive_evidence``).

``labels_to_buy`` sizes the next round of a candidate still undecided: the fewest labels after
which some outcome would stop it, so a round never buys a label the candidate could not need.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

# The mixture prior is the stop's and the budget planner's alike (schemes.mixture); its names are read here too.
from schemes.mixture import GRID, MIN_CANDIDATES_FOR_PRIOR, UNIFORM_MIXTURE, MixturePrior, estimate_mixture  # noqa: F401

SWORDS = "swords"
CURTAIL = "curtail"
ADAPTIVE = "adaptive"

ACCEPTABLE_ABOVE = Fraction(1, 2)
CONCEIVABLE_ABOVE = Fraction(0)
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

BETA_PRIOR, MIXTURE_PRIOR = "beta", "mixture"
AnyPrior = Prior | MixturePrior


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


def predictive(accepts: int, labels: int, *, remaining: int, prior: AnyPrior) -> list[float]:
    """P(K = k), k = 0..remaining: the accepts among the ``remaining`` labels still to come, given
    ``accepts`` of ``labels`` so far and the prior."""
    if isinstance(prior, Prior):
        alpha, beta = prior.alpha + accepts, prior.beta + labels - accepts
        return [beta_binomial_pmf(k, remaining, alpha, beta) for k in range(remaining + 1)]
    weights = prior.posterior(accepts, labels)
    return [
        math.comb(remaining, k) * sum(w * p**k * (1 - p) ** (remaining - k) for w, p in zip(weights, GRID, strict=True))
        for k in range(remaining + 1)
    ]


def posterior_mean(accepts: int, labels: int, *, prior: AnyPrior) -> float:
    """A candidate's expected share of accepts given ``accepts`` of ``labels`` and the prior."""
    if isinstance(prior, Prior):
        return (prior.alpha + accepts) / (prior.alpha + prior.beta + labels)
    return sum(w * p for w, p in zip(prior.posterior(accepts, labels), GRID, strict=True))


def expected_counts(accepts: int, rejects: int, labels: int, *, maximum: int, prior: AnyPrior) -> tuple[float, float]:
    """A candidate's accepts and rejects as expected with the design's ``maximum`` labels
    (docs/design.md §13, "The score of a stopped candidate"): its ``accepts`` and ``rejects`` so far,
    and each of the r = maximum - ``labels`` labels it did not get counted an accept with its
    posterior mean share m (``posterior_mean``; ``labels`` are its valid labels, abstains
    included), a reject otherwise: (accepts + r m, rejects + r (1 - m)). Its expected score is the
    first over their sum; with r = 0, the published accepts / (accepts + rejects)."""
    _check(accepts, labels, maximum)
    if rejects < 0 or accepts + rejects > labels:
        raise ValueError(f"accepts ({accepts}) and rejects ({rejects}) must fit in the labels ({labels})")
    remaining = max(0, maximum - labels)
    if not remaining:
        return float(accepts), float(rejects)
    mean = posterior_mean(accepts, labels, prior=prior)
    return accepts + remaining * mean, rejects + remaining * (1 - mean)


def change_probabilities(accepts: int, labels: int, *, maximum: int, prior: AnyPrior) -> tuple[float, float]:
    """The predictive probabilities that the labels still to come (up to ``maximum``) change the
    acceptable decision, and the conceivable one, taken now on ``accepts`` of ``labels``."""
    _check(accepts, labels, maximum)
    remaining = maximum - labels
    if remaining <= 0:
        return 0.0, 0.0
    now = decisions(accepts, labels)
    acceptable = conceivable = 0.0
    for k, chance in enumerate(predictive(accepts, labels, remaining=remaining, prior=prior)):
        then = decisions(accepts + k, maximum)
        acceptable += chance if then[0] != now[0] else 0.0
        conceivable += chance if then[1] != now[1] else 0.0
    return min(1.0, acceptable), min(1.0, conceivable)


def change_probability(accepts: int, labels: int, *, maximum: int, prior: AnyPrior) -> float:
    """The predictive probability that the labels still to come (up to ``maximum``) change the
    acceptable or the conceivable decision taken now on ``accepts`` of ``labels``."""
    _check(accepts, labels, maximum)
    remaining = maximum - labels
    if remaining <= 0:
        return 0.0
    now = decisions(accepts, labels)
    changed = sum(
        chance
        for k, chance in enumerate(predictive(accepts, labels, remaining=remaining, prior=prior))
        if decisions(accepts + k, maximum) != now
    )
    return min(1.0, changed)


def adaptive_decided(
    accepts: int,
    labels: int,
    *,
    maximum: int,
    prior: AnyPrior,
    epsilon: float,
    floor: int,
    epsilon_conceivable: float | None = None,
) -> bool:
    """Decided at the maximum; before the floor, never; between, once a change is less likely than
    ``epsilon`` or impossible (``curtail_decided``). With ``epsilon_conceivable``, the acceptable
    decision's change must be less likely than ``epsilon`` and the conceivable one's than it."""
    _check(accepts, labels, maximum)
    if labels >= maximum:
        return True
    if labels < floor:
        return False
    if curtail_decided(accepts, labels, maximum=maximum):
        return True
    if epsilon_conceivable is None:
        return change_probability(accepts, labels, maximum=maximum, prior=prior) < epsilon
    acceptable, conceivable = change_probabilities(accepts, labels, maximum=maximum, prior=prior)
    return acceptable < epsilon and conceivable < epsilon_conceivable


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


def beta_on_grid(prior: Prior) -> MixturePrior:
    """A Beta prior read on ``GRID``: each point weighs the Beta's density there, normalised."""
    log_density = [(prior.alpha - 1) * math.log(p) + (prior.beta - 1) * math.log1p(-p) for p in GRID]
    top = max(log_density)
    return MixturePrior(tuple(math.exp(value - top) for value in log_density))


def weighted_counts(labels: Iterable[tuple[bool, float]]) -> tuple[int, int]:
    """(accepts, labels) a stop reads from labels weighed by their workers' reliability: each label
    (accept or not, its worker's weight, clipped to [0, 1]) counts its weight, and both sums are
    rounded to whole labels. With every weight 1 these are the raw counts; a label of a worker no
    better than chance (weight 0) counts for nothing, so the candidate asks for another."""
    accepts = total = 0.0
    for accept, weight in labels:
        weight = min(1.0, max(0.0, weight))
        total += weight
        accepts += weight if accept else 0.0
    rounded_total = round(total)
    return min(round(accepts), rounded_total), rounded_total


@dataclass(frozen=True)
class StoppingRule:
    """A policy other than swords, with what it needs: the design's maximum, and for adaptive its
    epsilon, floor and priors by source key (``DEFAULT_PRIOR`` for a source without one)."""

    policy: str
    maximum: int
    epsilon: float = 0.0
    floor: int = 1
    priors: Mapping[str, AnyPrior] = field(default_factory=dict)
    # The conceivable decision's own epsilon (the mixture prior's rule), None for one epsilon of either.
    epsilon_conceivable: float | None = None
    # Counts a stop reads instead of the raw ones, by candidate id (``weighted_counts``).
    evidence: Mapping[int, tuple[int, int]] = field(default_factory=dict)
    # Labels each candidate (by id) can still be given, where a replay's release bounds them
    # (``schemes.base.REPLAY_LABELS_LEFT``); empty for a real crowd, whose labels never run out.
    available: Mapping[int, int] = field(default_factory=dict)
    # Answers by (accepts, labels, source): a refresh asks the same counts of many candidates.
    _memo: dict[tuple[int, int, str], bool] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.policy not in (CURTAIL, ADAPTIVE):
            raise ValueError(f"a stopping rule is curtail or adaptive, not {self.policy!r}")
        if self.maximum < 1:
            raise ValueError("the maximum must be at least 1 label")

    def prior(self, source: str) -> AnyPrior:
        return self.priors.get(source, DEFAULT_PRIOR)

    def counts(self, candidate_id: int, accepts: int, labels: int) -> tuple[int, int]:
        """The (accepts, labels) the rule reads of a candidate: its weighted evidence if it has one."""
        return self.evidence.get(candidate_id, (accepts, labels))

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
                    epsilon_conceivable=self.epsilon_conceivable,
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
