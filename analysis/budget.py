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
  The simulations are seeded; the estimate is their median.
- The **interval** also holds the priors' own uncertainty: fitted to a pilot of a few targets,
  they are themselves uncertain (a few per cent), far more than the simulations spread under them
  (a fraction of one). Where the context names each candidate's pilot unit (its target), each of
  ``resamples`` further simulations draws the pilot's targets with replacement (a bootstrap),
  refits the priors per source group to that resample, and simulates the rest under them; the
  interval is the central ``confidence`` share of those, widened for the pilot's few units
  (``small_sample_scale``: a percentile bootstrap of 20 units runs narrow; docs/design.md §13).
  Without units (or with no resample) it is the central share of the simulations under the fitted
  priors.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
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
    # What the interval's resamples refit (by row): each candidate's source group, and its pilot
    # unit (its target: a unit's candidates are drawn together); None: no resampling.
    groups: tuple[str, ...] | None = None
    units: IntArray | None = None


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
    units: IntArray | None = None,
) -> tuple[PlanContext, dict[str, BetaFit]]:
    """The context a plan reads, from the labels so far (counts per candidate, by row) and each
    candidate's source group: the scheme's numbers (``settings``' ``total_labels``, ``step2_labels``
    and ``pass_min_accepts``), a beta-binomial fit per source group and, unless ``mixture`` is off,
    the two-humped prior per source group the simulations draw from (``source_mixtures``).
    ``units`` (each candidate's target, by row) lets the interval resample the pilot by target.
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
        groups=tuple(groups),
        units=None if units is None else np.asarray(units, dtype=np.int64),
    )
    return context, priors


@dataclass(frozen=True)
class _Cells:
    """Rows of like counts under a like prior, whose rates are drawn from one posterior: each row's
    cell, the rows in cell order and where each cell's begin (``bounds``), a row of each cell
    (``first``), and each cell's likelihood on the shares, scaled to a largest of 1."""

    of_row: IntArray
    order: IntArray
    bounds: IntArray
    first: IntArray
    likelihood: FloatArray


def _cells(keys: FloatArray, shares: FloatArray, accepts: IntArray, labels: IntArray) -> _Cells:
    """The cells of rows alike in ``keys`` (one row each: the prior and the counts)."""
    _, first, of_row = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    of_row = of_row.reshape(-1)
    order = np.argsort(of_row, kind="stable")
    bounds = np.searchsorted(of_row[order], np.arange(first.size + 1))
    log = accepts[first, None] * np.log(shares) + (labels - accepts)[first, None] * np.log1p(-shares)
    return _Cells(of_row, order, bounds, first, np.exp(log - log.max(axis=1, keepdims=True)))


def _draw_from_cells(
    rng: np.random.Generator, cells: _Cells, weights: FloatArray, shares: FloatArray, rows: int
) -> FloatArray:
    """A rate per row drawn from its cell's posterior: the cell's prior ``weights`` (one row per
    cell) times its likelihood; one uniform per row, in row order."""
    cumulative = np.cumsum(weights * cells.likelihood, axis=1)
    wanted = rng.random(rows) * cumulative[cells.of_row, -1]
    picked = np.empty(rows, dtype=np.int64)
    for cell in range(cells.first.size):
        members = cells.order[cells.bounds[cell] : cells.bounds[cell + 1]]
        # The shares whose cumulative weight is short of the uniform's: the share drawn is the next.
        picked[members] = np.searchsorted(cumulative[cell], wanted[members], side="left")
    return shares[np.minimum(picked, shares.size - 1)]


def _rate_drawer(
    context: PlanContext, rows: IntArray, accepts: IntArray, labels: IntArray
) -> Callable[[np.random.Generator], FloatArray]:
    """Draws of each row's accept rate from its prior updated with its own labels. Rows of like
    counts and prior share their posterior, worked out once."""
    if context.prior_shares is None or context.prior_weights is None:
        alpha = context.prior_alpha[rows] + accepts
        beta = context.prior_beta[rows] + labels - accepts
        return lambda rng: rng.beta(alpha, beta)
    shares = context.prior_shares
    prior = context.prior_weights[rows]
    cells = _cells(np.column_stack([prior, accepts, labels]), shares, accepts, labels)
    cell_weights = prior[cells.first]
    return lambda rng: _draw_from_cells(rng, cells, cell_weights, shares, rows.size)


@dataclass(frozen=True)
class ResampledPriors:
    """The priors refitted to each of ``resamples`` bootstraps of the pilot, by source group: the
    group's code of each row, and per resample either the mixture weights (resample, group, share)
    or the beta's parameters (resample, group)."""

    group_of_row: IntArray
    weights: FloatArray | None
    alpha: FloatArray | None
    beta: FloatArray | None


def resampled_priors(
    rng: np.random.Generator, context: PlanContext, accepts: IntArray, labels: IntArray, resamples: int
) -> ResampledPriors | None:
    """Bootstraps of the pilot: its units (the targets with a labelled candidate) drawn with
    replacement, as many as it has, each unit's candidates counted as often as it was drawn; each
    resample's priors fitted per source group as ``plan_context`` fits them (the same mixture EM,
    or the same beta-binomial fit, a group without a labelled candidate taking the pooled fit).
    None without units or groups or a labelled candidate: nothing to resample."""
    if context.units is None or context.groups is None or resamples < 1:
        return None
    labelled = np.flatnonzero(labels > 0)
    if not labelled.size:
        return None
    names = sorted(set(context.groups))
    code = {name: index for index, name in enumerate(names)}
    group_of_row = np.array([code[name] for name in context.groups], dtype=np.int64)
    unit_values, unit_of = np.unique(context.units[labelled], return_inverse=True)
    n_units = unit_values.size
    # How often each unit comes in each resample: (resamples, units).
    drawn = rng.integers(0, n_units, size=(resamples, n_units))
    times = np.zeros((resamples, n_units), dtype=np.float64)
    np.add.at(times, (np.arange(resamples)[:, None], drawn), 1.0)
    # Distinct (group, accepts, labels) cells of the labelled candidates, and each unit's candidates
    # per cell: a resample's candidates per cell are its units' times that.
    cells, cell_of = np.unique(
        np.stack([group_of_row[labelled], accepts[labelled], labels[labelled]], axis=1), axis=0, return_inverse=True
    )
    cell_of = cell_of.reshape(-1)
    per_unit = np.zeros((n_units, len(cells)), dtype=np.float64)
    np.add.at(per_unit, (unit_of.reshape(-1), cell_of), 1.0)
    many = times @ per_unit
    if context.prior_shares is not None:
        weights = np.empty((resamples, len(names), context.prior_shares.size), dtype=np.float64)
        for group in range(len(names)):
            own = cells[:, 0] == group
            weights[:, group] = _mixtures(cells[own, 1], cells[own, 2], many[:, own])
        return ResampledPriors(group_of_row, weights, None, None)
    alpha = np.empty((resamples, len(names)), dtype=np.float64)
    beta = np.empty((resamples, len(names)), dtype=np.float64)
    counts = many.astype(np.int64)
    for resample in range(resamples):
        cell_accepts = np.repeat(cells[:, 1], counts[resample])
        cell_labels = np.repeat(cells[:, 2], counts[resample])
        cell_groups = np.repeat(cells[:, 0], counts[resample])
        pooled = fit_beta_binomial(cell_accepts, cell_labels)
        for group in range(len(names)):
            own = cell_groups == group
            fit = fit_beta_binomial(cell_accepts[own], cell_labels[own]) if own.any() else pooled
            fit = fit if fit.candidates else pooled
            alpha[resample, group], beta[resample, group] = fit.alpha, fit.beta
    return ResampledPriors(group_of_row, None, alpha, beta)


def _resampled_rate_drawer(
    context: PlanContext, refits: ResampledPriors, rows: IntArray, accepts: IntArray, labels: IntArray
) -> Callable[[np.random.Generator, int], FloatArray]:
    """``_rate_drawer`` under the priors of one resample (its number the second argument)."""
    groups = refits.group_of_row[rows]
    if refits.weights is not None and context.prior_shares is not None:
        shares, weights = context.prior_shares, refits.weights
        cells = _cells(np.column_stack([groups, accepts, labels]), shares, accepts, labels)
        cell_groups = groups[cells.first]
        return lambda rng, resample: _draw_from_cells(rng, cells, weights[resample, cell_groups], shares, rows.size)
    assert refits.alpha is not None and refits.beta is not None
    alpha, beta = refits.alpha, refits.beta
    return lambda rng, resample: rng.beta(alpha[resample, groups] + accepts, beta[resample, groups] + labels - accepts)


def _mixtures(accepts: IntArray, labels: IntArray, many: FloatArray) -> FloatArray:
    """``schemes.mixture.estimate_mixture`` for many tables at once: the cells' (accepts, labels)
    and each table's candidates per cell (table, cell); the weights per table (table, share). Each
    table stops on its own, as that function's EM does, and takes the uniform weights with too few
    candidates."""
    from schemes.mixture import (
        GRID,
        MIN_CANDIDATES_FOR_PRIOR,
        MIXTURE_FLOOR,
        MIXTURE_ITERATIONS,
        MIXTURE_TOLERANCE,
        UNIFORM_MIXTURE,
    )

    grid = np.array(GRID)
    uniform = np.array(UNIFORM_MIXTURE.weights)
    accepts = np.asarray(accepts, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.float64)
    # Rows: the cells; columns: the grid's shares.
    likelihood = np.exp(np.outer(accepts, np.log(grid)) + np.outer(labels - accepts, np.log1p(-grid)))
    total = many.sum(axis=1)
    weights = np.tile(uniform, (many.shape[0], 1))
    running = np.flatnonzero(total >= MIN_CANDIDATES_FOR_PRIOR)
    fitted = running.copy()
    scale = total + MIXTURE_FLOOR * grid.size
    for _ in range(MIXTURE_ITERATIONS):
        if not running.size:
            break
        current = weights[running]
        # Each cell's candidates shared among the shares by their posterior, summed over cells.
        share = many[running] / (current @ likelihood.T)
        updated = (current * (share @ likelihood) + MIXTURE_FLOOR) / scale[running, None]
        moved = np.max(np.abs(updated - current), axis=1)
        weights[running] = updated
        running = running[moved >= MIXTURE_TOLERANCE]
    weights[fitted] /= weights[fitted].sum(axis=1, keepdims=True)
    return weights


def _simulate(
    rng: np.random.Generator,
    rule: StoppingRule,
    rows: IntArray,
    accepts: IntArray,
    labels: IntArray,
    rate: FloatArray,
    max_labels: int,
) -> int:
    """Labels bought drawing one at a time for ``rows`` (at ``rate``) until the rule settles each
    or it reaches ``max_labels``; a settled row leaves the arrays."""
    bought = 0
    accepts, labels = accepts.copy(), labels.copy()
    while rows.size:
        accepts += rng.random(rows.size) < rate
        labels += 1
        bought += rows.size
        going = ~rule(accepts, labels, rows) & (labels < max_labels)
        rows, accepts, labels, rate = rows[going], accepts[going], labels[going], rate[going]
    return bought


def t_quantile(confidence: float, df: int) -> float:
    """The half-width of Student's t distribution's central ``confidence`` share at ``df`` degrees
    of freedom: t with P(|T| <= t) = ``confidence``, found by bisection on the exact distribution of
    an integer ``df`` (Abramowitz and Stegun 26.7.3 and 26.7.4: a finite series in the cosine of
    arctan(t / sqrt(df))). Past 1,000 degrees of freedom the normal's, which it is then to 0.1 %."""
    if df < 1 or not 0 < confidence < 1:
        raise ValueError("t_quantile needs df >= 1 and confidence between 0 and 1")
    if df > 1000:
        return NormalDist().inv_cdf((1 + confidence) / 2)

    def within(t: float) -> float:
        theta = math.atan(t / math.sqrt(df))
        sine, cosine2 = math.sin(theta), math.cos(theta) ** 2
        if df % 2:
            term = total = math.cos(theta) if df > 1 else 0.0
            for k in range(1, (df - 1) // 2):
                term *= cosine2 * (2 * k) / (2 * k + 1)
                total += term
            return 2 / math.pi * (theta + sine * total)
        term = total = 1.0
        for k in range(df // 2 - 1):
            term *= cosine2 * (2 * k + 1) / (2 * k + 2)
            total += term
        return sine * total

    low, high = 0.0, 1.0
    while within(high) < confidence:
        low, high = high, 2 * high
    for _ in range(100):
        middle = (low + high) / 2
        if within(middle) < confidence:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def small_sample_scale(units: int, confidence: float) -> float:
    """How much wider than its percentiles a bootstrap over ``units`` units reads its central
    ``confidence`` share (docs/design.md §13): the bootstrap's spread is the units' spread divided by
    n, not n - 1, and a spread read from n units is itself uncertain, which Student's t holds and
    the normal does not: sqrt(n / (n - 1)) times the t quantile at n - 1 degrees of freedom over the
    normal's. At 90 %: 1.45 at 5 units, 1.08 at 20, 1.01 at 100; 1 with fewer than two units."""
    if units < 2:
        return 1.0
    normal = NormalDist().inv_cdf((1 + confidence) / 2)
    return math.sqrt(units / (units - 1)) * t_quantile(confidence, units - 1) / normal


def resampled_interval(spread: IntArray, *, estimate: int, units: int, confidence: float) -> tuple[int, int]:
    """The interval read from the totals under ``units`` resampled units (``spread``): their central
    ``confidence`` share (nearest ranks), its two arms from their median widened by
    ``small_sample_scale``, then widened to hold ``estimate`` (the fitted priors', which the
    resamples spread around). Rounded to whole labels."""
    tail = (1 - confidence) / 2
    low, middle, high = (float(value) for value in np.quantile(spread, [tail, 0.5, 1 - tail], method="nearest"))
    scale = small_sample_scale(units, confidence)
    low, high = round(middle - scale * (middle - low)), round(middle + scale * (high - middle))
    return min(low, estimate), max(high, estimate)


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
    # Simulations under resampled priors the interval was read from (0: under the fitted priors).
    resamples: int = 0


def forecast_labels(
    *,
    policy: str,
    accepts: IntArray,
    labels: IntArray,
    context: PlanContext,
    simulations: int,
    seed: int,
    confidence: float = 0.9,
    resamples: int = 0,
) -> LabelForecast:
    """Labels ``policy`` buys from here: counts per candidate now, ``simulations`` seeded draws of
    the rest under the fitted priors for the estimate, and ``resamples`` more under the priors
    refitted to bootstraps of the pilot for the interval, where the context names its units (see
    the module's docstring). Deterministic for a given seed."""
    if policy not in RULES:
        raise ValueError(f"unknown stopping policy {policy!r}; the planner knows {', '.join(sorted(RULES))}")
    if simulations < 2 or not 0 < confidence < 1:
        raise ValueError("simulations must be at least 2 and confidence between 0 and 1")
    if resamples and resamples < 2:
        raise ValueError("resamples must be 0 or at least 2")
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
    draw_rates = _rate_drawer(context, open_rows, accepts[open_rows], labels[open_rows])
    for simulation in range(simulations):
        rate = draw_rates(rng)
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
    # The interval's own stream, apart from the estimate's: the estimate is the same with or without it.
    resample_rng = np.random.default_rng([seed, 1])
    refits = resampled_priors(resample_rng, context, accepts, labels, resamples)
    if refits is not None:
        spread = np.empty(resamples, dtype=np.int64)
        open_accepts, open_labels = accepts[open_rows], labels[open_rows]
        draw_resampled = _resampled_rate_drawer(context, refits, open_rows, open_accepts, open_labels)
        for resample in range(resamples):
            rate = draw_resampled(resample_rng, resample)
            bought = _simulate(resample_rng, rule, open_rows, open_accepts, open_labels, rate, context.max_labels)
            spread[resample] = bought + exact_part
        units = int(np.unique(context.units[labels > 0]).size) if context.units is not None else 0
        low, high = resampled_interval(spread, estimate=int(estimate), units=units, confidence=confidence)
    return LabelForecast(
        policy=policy,
        exact=False,
        estimate=int(estimate),
        low=int(low),
        high=int(high),
        settled=int(settled.sum()),
        candidates=int(labels.size),
        simulations=simulations,
        resamples=resamples if refits is not None else 0,
    )
