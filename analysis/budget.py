"""The budget planner: labels and money to finish a collection under each stopping policy
(docs/design.md §13). Pure functions over per-candidate label counts, numpy only.

A **stopping rule** says, for candidates with given (accepts, labels) counts, which are settled:
they need no further label. Rules are looked up by policy name in ``RULES``; each is built for one
plan from a ``PlanContext`` (the scheme's numbers and a beta prior per candidate), so a rule that
reads a prior (a Bayesian stop) has it. ``swords`` (today's rule, docs/design.md §6) is written
here; another policy plugs in with ``register_rule(name, factory)`` and is planned the same way.

How the rest is predicted:

- A candidate the rule has **settled** needs nothing more.
- Under ``swords`` a candidate past step 2 needs exactly the labels up to the design's maximum,
  so where every candidate is past step 2 the plan is exact and its interval a single point.
- Every other candidate is **simulated**: its accept rate is drawn from its source's beta prior
  updated with its own labels (a beta-binomial fit, per source group, of the labels so far), then
  labels are drawn one at a time until the rule settles it or the design's maximum is reached.
  The simulations are seeded; the estimate is their median and the interval the central
  ``confidence`` share of them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# A beta prior no label informs: the uniform.
UNIFORM = (1.0, 1.0)
# Overdispersion of a source's accept rates is kept inside (0, 1): a fit at 0 would be a binomial
# with no spread between candidates, at 1 a rate of 0 or 1 per candidate.
_MIN_OVERDISPERSION, _MAX_OVERDISPERSION = 1e-3, 0.999


@dataclass(frozen=True)
class PlanContext:
    """What a rule may read: the design's numbers and each candidate's beta prior (by row)."""

    max_labels: int
    step2_labels: int
    pass_min_accepts: int
    prior_alpha: FloatArray
    prior_beta: FloatArray
    # The benchmark's scheme settings, for a rule with settings of its own (an adaptive stop's epsilon).
    settings: Any = None
    # The benchmark planned and its candidates' ids by row, for a rule that reads what the policy
    # itself reads of the benchmark (the adaptive stop's priors per source); None for bare counts.
    benchmark: Any = None
    candidate_ids: IntArray | None = None
    # A prior of any shape instead of the beta (``source_mixtures``): weights (one row per
    # candidate) on the accept rates ``prior_shares``; None: the beta above.
    prior_shares: FloatArray | None = None
    prior_weights: FloatArray | None = None


class StoppingRule(Protocol):
    def __call__(self, accepts: IntArray, labels: IntArray, rows: IntArray) -> BoolArray:
        """Whether each candidate (``rows`` into the plan's candidates) with these counts is settled."""
        ...


RuleFactory = Callable[[PlanContext], StoppingRule]


def reduce_then_score_rule(context: PlanContext) -> StoppingRule:
    """The rule of docs/design.md §6: ``step2_labels`` labels, then more up to ``max_labels``
    only for a candidate with at least ``pass_min_accepts`` accepts among them. From counts alone:
    a candidate past step 2 without enough accepts never went on, so its accepts are its step-2 ones."""

    def settled(accepts: IntArray, labels: IntArray, rows: IntArray) -> BoolArray:
        dropped = (labels >= context.step2_labels) & (accepts < context.pass_min_accepts)
        return np.asarray(dropped | (labels >= context.max_labels), dtype=bool)

    return settled


# The stopping policies the planner knows, in the order a plan lists them; the schemes register
# theirs (a scheme's figures plug-in). A policy of ``EXACT_PAST_REDUCE`` asks for the rest of the
# design's labels of a candidate past the reduce step without chance: the planner counts them.
RULES: dict[str, RuleFactory] = {}
EXACT_PAST_REDUCE: set[str] = set()


def register_rule(name: str, factory: RuleFactory, *, exact_past_reduce: bool = False) -> None:
    """Make a stopping policy known to the planner (its factory builds the rule for one plan)."""
    RULES[name] = factory
    if exact_past_reduce:
        EXACT_PAST_REDUCE.add(name)


@dataclass(frozen=True)
class BetaFit:
    alpha: float
    beta: float
    candidates: int

    @property
    def mean(self) -> float:
        return self.alpha / (self.alpha + self.beta)


def fit_beta_binomial(accepts: IntArray, labels: IntArray) -> BetaFit:
    """A beta prior of accept rates from (accepts, labels) per candidate, by the method of moments
    (Kleinman 1973): the pooled rate, and the spread of the candidates' rates beyond the binomial
    spread their label counts explain. Candidates with fewer than two labels tell no spread but
    count in the rate; without any label the prior is uniform."""
    accepts = np.asarray(accepts, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.float64)
    labelled = labels > 0
    if not labelled.any() or labels.sum() == 0:
        return BetaFit(*UNIFORM, candidates=0)
    rate = float(accepts[labelled].sum() / labels[labelled].sum())
    rate = min(max(rate, 1e-6), 1 - 1e-6)
    spread = labels >= 2
    overdispersion = _MIN_OVERDISPERSION
    if spread.sum() >= 2:
        n = labels[spread]
        observed = accepts[spread] / n
        weights = n / n.sum()
        variance = float(np.sum(weights * (observed - rate) ** 2))
        binomial = rate * (1 - rate)
        # E[variance] = m(1-m) [ E_w(1/n) + rho (1 - E_w(1/n)) ] under the weights n / sum n.
        inverse = float(np.sum(weights / n))
        if inverse < 1:
            overdispersion = (variance / binomial - inverse) / (1 - inverse)
    overdispersion = min(max(overdispersion, _MIN_OVERDISPERSION), _MAX_OVERDISPERSION)
    strength = (1 - overdispersion) / overdispersion
    return BetaFit(alpha=rate * strength, beta=(1 - rate) * strength, candidates=int(labelled.sum()))


def source_priors(accepts: IntArray, labels: IntArray, groups: Sequence[str]) -> dict[str, BetaFit]:
    """A beta-binomial fit per source group; a group with no labelled candidate gets the fit of all."""
    names = np.asarray(groups, dtype=object)
    pooled = fit_beta_binomial(accepts, labels)
    fits: dict[str, BetaFit] = {}
    for group in sorted(set(groups)):
        mask = names == group
        fit = fit_beta_binomial(accepts[mask], labels[mask])
        fits[group] = fit if fit.candidates else BetaFit(pooled.alpha, pooled.beta, 0)
    return fits


def source_mixtures(accepts: IntArray, labels: IntArray, groups: Sequence[str]) -> tuple[FloatArray, FloatArray]:
    """A prior of any shape per source group: weights on a grid of accept rates fitted by EM to the
    group's counts (``schemes.mixture.estimate_mixture``, the prior the adaptive stop reads),
    the uniform weights for a group with too few candidates. Returns (the grid, weights per row).
    A source's rates have two humps (most thesaurus entries nobody accepts, a few most do), which
    one beta cannot hold: a beta fitted to them overstates how many candidates pass step 2."""
    from schemes.mixture import GRID, estimate_mixture

    names = np.asarray(groups, dtype=object)
    weights = np.empty((len(names), len(GRID)), dtype=np.float64)
    for group in sorted(set(groups)):
        mask = names == group
        counted = labels[mask] > 0
        table = Counter(zip(accepts[mask][counted].tolist(), labels[mask][counted].tolist(), strict=True))
        weights[mask] = estimate_mixture(table).weights
    return np.array(GRID, dtype=np.float64), weights


def plan_context(
    *,
    accepts: IntArray,
    labels: IntArray,
    groups: Sequence[str],
    settings: Any,
    mixture: bool = True,
    benchmark: Any = None,
    candidate_ids: IntArray | None = None,
) -> tuple[PlanContext, dict[str, BetaFit]]:
    """The context a plan reads, from the labels so far (counts per candidate, by row) and each
    candidate's source group: the scheme's numbers (``settings``' ``total_labels``, ``step2_labels``
    and ``pass_min_accepts``), a beta-binomial fit per source group and, unless ``mixture`` is off,
    the two-humped prior per source group the simulations draw from (``source_mixtures``).
    Returns the context and the beta fits by group (a plan shows them)."""
    accepts = np.asarray(accepts, dtype=np.int64)
    labels = np.asarray(labels, dtype=np.int64)
    priors = source_priors(accepts, labels, groups)
    shares, weights = source_mixtures(accepts, labels, groups) if mixture else (None, None)
    context = PlanContext(
        max_labels=settings.total_labels,
        step2_labels=settings.step2_labels,
        pass_min_accepts=settings.pass_min_accepts,
        prior_alpha=np.array([priors[group].alpha for group in groups], dtype=np.float64),
        prior_beta=np.array([priors[group].beta for group in groups], dtype=np.float64),
        settings=settings,
        benchmark=benchmark,
        candidate_ids=candidate_ids,
        prior_shares=shares,
        prior_weights=weights,
    )
    return context, priors


def _draw_rates(
    rng: np.random.Generator, context: PlanContext, rows: IntArray, accepts: IntArray, labels: IntArray
) -> FloatArray:
    """Each row's accept rate drawn from its prior updated with its own labels."""
    if context.prior_shares is None or context.prior_weights is None:
        return rng.beta(context.prior_alpha[rows] + accepts, context.prior_beta[rows] + labels - accepts)
    shares = context.prior_shares
    log = accepts[:, None] * np.log(shares) + (labels - accepts)[:, None] * np.log1p(-shares)
    posterior = context.prior_weights[rows] * np.exp(log - log.max(axis=1, keepdims=True))
    cumulative = np.cumsum(posterior, axis=1)
    picked = (cumulative < rng.random(rows.size)[:, None] * cumulative[:, -1:]).sum(axis=1)
    return shares[np.minimum(picked, shares.size - 1)]


@dataclass(frozen=True)
class LabelForecast:
    """Labels still to buy to finish: the estimate (median) and the interval over simulations."""

    policy: str
    exact: bool
    estimate: int
    low: int
    high: int
    settled: int
    candidates: int
    simulations: int


def forecast_labels(
    *,
    policy: str,
    accepts: IntArray,
    labels: IntArray,
    context: PlanContext,
    simulations: int,
    seed: int,
    confidence: float = 0.9,
) -> LabelForecast:
    """Labels ``policy`` buys from here: counts per candidate now, ``simulations`` seeded draws of
    the rest (see the module's docstring). Deterministic for a given seed."""
    if policy not in RULES:
        raise ValueError(f"unknown stopping policy {policy!r}; the planner knows {', '.join(sorted(RULES))}")
    if simulations < 2 or not 0 < confidence < 1:
        raise ValueError("simulations must be at least 2 and confidence between 0 and 1")
    accepts = np.asarray(accepts, dtype=np.int64)
    labels = np.asarray(labels, dtype=np.int64)
    rule = RULES[policy](context)
    rows = np.arange(labels.size, dtype=np.int64)
    settled = rule(accepts, labels, rows) | (labels >= context.max_labels)
    open_rows = rows[~settled]
    exact_part = 0
    if policy in EXACT_PAST_REDUCE:
        # Past step 2 and not dropped: the rest of the design's labels, no chance involved.
        determined = labels[open_rows] >= context.step2_labels
        exact_part = int((context.max_labels - labels[open_rows[determined]]).sum())
        open_rows = open_rows[~determined]
    if open_rows.size == 0:
        return LabelForecast(policy, True, exact_part, exact_part, exact_part, int(settled.sum()), labels.size, 0)
    rng = np.random.default_rng(seed)
    totals = np.empty(simulations, dtype=np.int64)
    for simulation in range(simulations):
        rate = _draw_rates(rng, context, open_rows, accepts[open_rows], labels[open_rows])
        sim_accepts = accepts[open_rows].copy()
        sim_labels = labels[open_rows].copy()
        active = np.ones(open_rows.size, dtype=bool)
        bought = 0
        while active.any():
            draw = rng.random(open_rows.size) < rate
            sim_accepts += draw & active
            sim_labels += active
            bought += int(active.sum())
            active &= ~rule(sim_accepts, sim_labels, open_rows) & (sim_labels < context.max_labels)
        totals[simulation] = bought + exact_part
    tail = (1 - confidence) / 2
    low, estimate, high = np.quantile(totals, [tail, 0.5, 1 - tail], method="nearest")
    return LabelForecast(
        policy=policy,
        exact=False,
        estimate=int(estimate),
        low=int(low),
        high=int(high),
        settled=int(settled.sum()),
        candidates=int(labels.size),
        simulations=simulations,
    )
