"""The budget planner's maths: the swords rule on hand-worked counts, an exact plan where the rule
decides alone, simulations that match the expected labels, beta-binomial fits and the seam for
other policies."""

from types import SimpleNamespace

import numpy as np
import pytest

from analysis import budget
from analysis.budget import PlanContext, fit_beta_binomial, forecast_labels, reduce_then_score_rule, source_priors


def _context(n: int, alpha: float = 1.0, beta: float = 1.0) -> PlanContext:
    return PlanContext(
        max_labels=10,
        step2_labels=3,
        pass_min_accepts=1,
        prior_alpha=np.full(n, alpha),
        prior_beta=np.full(n, beta),
    )


def _array(values: list[int]) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def test_the_reduce_then_score_rule_settles_by_hand_worked_counts() -> None:
    accepts = _array([0, 0, 1, 1, 3, 0])
    labels = _array([2, 3, 3, 9, 10, 0])
    settled = reduce_then_score_rule(_context(6))(accepts, labels, np.arange(6))
    # 0 of 3: dropped after step 2; 1 of 3 and 1 of 9 go on to 10; 10 labels: done; none yet: not.
    assert settled.tolist() == [False, True, False, False, True, False]


def test_a_plan_past_step_two_is_exact() -> None:
    accepts = _array([1, 0, 2, 4])
    labels = _array([3, 3, 5, 10])
    forecast = forecast_labels(
        policy="swords", accepts=accepts, labels=labels, context=_context(4), simulations=10, seed=1
    )
    # 7 more for the first, none for the dropped one, 5 more for the third, none for the full one.
    assert (forecast.exact, forecast.estimate, forecast.low, forecast.high) == (True, 12, 12, 12)
    assert forecast.settled == 2


def test_simulated_labels_match_the_expected_swords_labels() -> None:
    # A known accept rate p (a very strong prior): a fresh candidate costs 3 labels, plus 7 with
    # probability 1 - (1 - p)^3 that step 2 finds an accept.
    n, p = 2000, 0.2
    context = _context(n, alpha=p * 1e6, beta=(1 - p) * 1e6)
    forecast = forecast_labels(
        policy="swords",
        accepts=np.zeros(n, dtype=np.int64),
        labels=np.zeros(n, dtype=np.int64),
        context=context,
        simulations=50,
        seed=3,
    )
    expected = n * (3 + 7 * (1 - (1 - p) ** 3))
    assert forecast.estimate == pytest.approx(expected, rel=0.02)
    assert forecast.low <= forecast.estimate <= forecast.high
    assert forecast.low < forecast.high
    assert not forecast.exact
    # Two candidates, one dropped for certain at p = 0 and one at p = 1 going to 10, and a third
    # with 2 labels and an accept, which needs 8 more whatever comes.
    certain = PlanContext(10, 3, 1, np.array([1e-9, 1e9, 1.0]), np.array([1e9, 1e-9, 1.0]))
    sure = forecast_labels(
        policy="swords", accepts=_array([0, 0, 1]), labels=_array([0, 0, 2]), context=certain, simulations=5, seed=0
    )
    assert (sure.estimate, sure.low, sure.high) == (3 + 10 + 8, 21, 21)


def test_a_forecast_repeats_for_its_seed() -> None:
    n = 300
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 4, n)
    accepts = np.minimum(labels, rng.integers(0, 2, n))
    first = forecast_labels(
        policy="swords", accepts=accepts, labels=labels, context=_context(n), simulations=20, seed=5
    )
    again = forecast_labels(
        policy="swords", accepts=accepts, labels=labels, context=_context(n), simulations=20, seed=5
    )
    assert first == again


def test_the_beta_binomial_fit_recovers_a_known_prior() -> None:
    rng = np.random.default_rng(4)
    alpha, beta = 0.6, 5.4  # mean 0.1, overdispersion 1 / (1 + 6)
    rates = rng.beta(alpha, beta, 20000)
    labels = np.full(rates.size, 10, dtype=np.int64)
    accepts = rng.binomial(labels, rates)
    fit = fit_beta_binomial(accepts, labels)
    assert fit.mean == pytest.approx(0.1, abs=0.005)
    assert fit.alpha + fit.beta == pytest.approx(6.0, rel=0.1)
    assert fit_beta_binomial(_array([0, 0]), _array([0, 0])).candidates == 0


def test_each_source_gets_its_own_prior_and_an_unlabelled_one_the_pooled_fit() -> None:
    accepts = _array([5, 4, 0, 1, 0])
    labels = _array([10, 10, 10, 10, 0])
    priors = source_priors(accepts, labels, ["coinco-only", "coinco-only", "thesaurus-only", "thesaurus-only", "other"])
    assert priors["coinco-only"].mean > priors["thesaurus-only"].mean
    assert priors["other"].candidates == 0
    assert priors["other"].mean == pytest.approx(fit_beta_binomial(accepts, labels).mean)


def test_another_policy_plugs_in_through_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(budget.RULES, "one", lambda context: lambda accepts, labels, rows: labels >= 1)
    forecast = forecast_labels(
        policy="one", accepts=_array([0, 0, 1]), labels=_array([0, 0, 1]), context=_context(3), simulations=4, seed=0
    )
    assert (forecast.estimate, forecast.low, forecast.high, forecast.settled) == (2, 2, 2, 1)
    with pytest.raises(ValueError, match="unknown stopping policy 'nonesuch'"):
        forecast_labels(
            policy="nonesuch", accepts=_array([0]), labels=_array([0]), context=_context(1), simulations=4, seed=0
        )


def test_a_two_humped_prior_draws_each_candidate_a_rate_from_its_posterior() -> None:
    # Half the weight on a rate of 0.005 (nobody accepts), half on 0.95. A fresh candidate under
    # swords costs 3 labels, plus 7 when step 2 finds an accept: 3 + 7 (0.5 (1 - 0.995^3) +
    # 0.5 (1 - 0.05^3)) = 6.552 expected.
    shares = np.array([0.005, 0.95])
    n = 2000
    weights = np.full((n, 2), 0.5)
    context = PlanContext(10, 3, 1, np.ones(n), np.ones(n), prior_shares=shares, prior_weights=weights)
    fresh = forecast_labels(
        policy="swords",
        accepts=np.zeros(n, dtype=np.int64),
        labels=np.zeros(n, dtype=np.int64),
        context=context,
        simulations=50,
        seed=3,
    )
    assert fresh.estimate == pytest.approx(n * (3 + 7 * (0.5 * (1 - 0.995**3) + 0.5 * (1 - 0.05**3))), rel=0.02)
    # Had every candidate one rate, the prior's mean 0.4775, step 2 would pass 1 - 0.5225^3 of them.
    assert fresh.estimate < n * (3 + 7 * (1 - 0.5225**3)) * 0.9


def test_source_mixtures_fit_each_group_on_the_grid() -> None:
    accepts = _array([0] * 30 + [3] * 10 + [1] * 5)
    labels = _array([3] * 45)
    shares, weights = budget.source_mixtures(accepts, labels, ["thesaurus"] * 40 + ["coinco"] * 5)
    assert weights.shape == (45, shares.size) and np.allclose(weights.sum(axis=1), 1)
    # Thesaurus: three quarters of its candidates never accept, a quarter always do.
    low, high = weights[0][shares < 0.1].sum(), weights[0][shares > 0.9].sum()
    assert low == pytest.approx(0.75, abs=0.03) and high == pytest.approx(0.25, abs=0.03)
    # Five coinco candidates are too few for a fit: the uniform weights.
    assert np.allclose(weights[44], 1 / shares.size)


# ---- the interval holds the priors' own uncertainty ------------------------------------------------

SWORDS_NUMBERS = SimpleNamespace(total_labels=10, step2_labels=3, pass_min_accepts=1)


def _collection(seed: int, targets: int = 400) -> tuple[np.ndarray, list[str], np.ndarray, np.ndarray]:
    """A collection whose truth is known: targets of 4 to 10 candidates, a quarter from one source and
    the rest from another, each target with its own share of good candidates (a good one accepted
    most of the time, another almost never), every candidate labelled under the swords rule (3
    labels, 10 with an accept among them). Returns each candidate's target, source, accepts, labels."""
    rng = np.random.default_rng(seed)
    units = np.repeat(np.arange(targets), rng.integers(4, 11, targets))
    n = units.size
    coinco = rng.random(n) < 0.25
    share = rng.beta(2, 6, targets)[units]
    good = rng.random(n) < np.where(coinco, np.minimum(1, 2.5 * share), share)
    rate = np.where(good, rng.beta(6, 3, n), rng.beta(0.4, 20, n))
    accepts, labels = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    for _ in range(10):
        going = (labels < 3) | ((accepts >= 1) & (labels < 10))
        accepts += going & (rng.random(n) < rate)
        labels += going
    return units, ["coinco-only" if c else "thesaurus-only" for c in coinco], accepts, labels


def _after_a_pilot(seed: int, *, resamples: int, mixture: bool = True) -> tuple[budget.LabelForecast, int]:
    """The plan after a pilot of 20 of the collection's 400 targets, and the labels the rest took."""
    units, groups, accepts, labels = _collection(seed)
    pilot = np.isin(units, np.random.default_rng(1000 + seed).choice(units.max() + 1, 20, replace=False))
    pilot_accepts, pilot_labels = np.where(pilot, accepts, 0), np.where(pilot, labels, 0)
    context, _ = budget.plan_context(
        accepts=pilot_accepts, labels=pilot_labels, groups=groups, settings=SWORDS_NUMBERS, mixture=mixture, units=units
    )
    forecast = forecast_labels(
        policy="swords",
        accepts=pilot_accepts,
        labels=pilot_labels,
        context=context,
        simulations=100,
        seed=seed,
        resamples=resamples,
    )
    return forecast, int(labels[~pilot].sum())


def test_the_interval_holds_the_truth_about_as_often_as_it_says() -> None:
    # Ten collections whose truth is known, a pilot of 5 % of the targets each: the 90 % interval
    # holds what the rest took in most (8 of these 10; 15 of the first 20). Under the priors fitted
    # to the pilot alone it spans chance only (about 2 % either side here, where the priors from 20
    # targets are uncertain by about 7 %), and misses more often than it holds (4 of these 10).
    held = held_alone = 0
    for seed in range(10):
        forecast, used = _after_a_pilot(seed, resamples=100)
        alone, _ = _after_a_pilot(seed, resamples=0)
        held += forecast.low <= used <= forecast.high
        held_alone += alone.low <= used <= alone.high
        # The estimate is the fitted priors' either way; the interval holds it.
        assert forecast.estimate == alone.estimate
        assert forecast.low <= forecast.estimate <= forecast.high
        assert forecast.resamples == 100 and alone.resamples == 0
    assert held >= 7
    assert held_alone <= 4


def test_the_beta_priors_resample_too() -> None:
    forecast, _ = _after_a_pilot(3, resamples=100, mixture=False)
    alone, _ = _after_a_pilot(3, resamples=0, mixture=False)
    assert forecast.estimate == alone.estimate
    assert forecast.low < alone.low and forecast.high > alone.high
    assert (forecast.high - forecast.low) > 3 * (alone.high - alone.low)


def test_a_resampled_interval_repeats_for_its_seed_and_needs_units() -> None:
    first, _ = _after_a_pilot(4, resamples=30)
    again, _ = _after_a_pilot(4, resamples=30)
    assert first == again
    # Without units the context names nothing to resample: the interval of the simulations alone.
    n = 300
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 4, n)
    accepts = np.minimum(labels, rng.integers(0, 2, n))
    plain = forecast_labels(
        policy="swords", accepts=accepts, labels=labels, context=_context(n), simulations=20, seed=5, resamples=20
    )
    assert plain.resamples == 0
    assert plain == forecast_labels(
        policy="swords", accepts=accepts, labels=labels, context=_context(n), simulations=20, seed=5
    )
    with pytest.raises(ValueError, match="resamples"):
        forecast_labels(
            policy="swords", accepts=accepts, labels=labels, context=_context(n), simulations=20, seed=5, resamples=1
        )


def test_a_resample_draws_whole_targets_and_refits_as_the_plan_fits() -> None:
    # Two targets of 30 labelled candidates each: one whose candidates all accept, one whose never
    # do. A resample holds the first target twice, the second twice, or one of each: its prior is
    # the fit to that resample, which ``source_mixtures`` gives for the same counts.
    units = np.repeat([0, 1, 2], 30)
    accepts = np.concatenate([np.full(30, 3), np.zeros(30, dtype=np.int64), np.zeros(30, dtype=np.int64)])
    labels = np.concatenate([np.full(30, 3), np.full(30, 3), np.zeros(30, dtype=np.int64)])
    groups = ["thesaurus-only"] * 90
    context, _ = budget.plan_context(
        accepts=accepts, labels=labels, groups=groups, settings=SWORDS_NUMBERS, units=units
    )
    refits = budget.resampled_priors(np.random.default_rng(0), context, accepts, labels, 40)
    assert refits is not None and refits.weights is not None
    shares = context.prior_shares
    assert shares is not None
    expected = {}
    for twice in ([0, 0], [1, 1], [0, 1]):
        rows = np.concatenate([np.flatnonzero(units == unit) for unit in twice])
        _, weights = budget.source_mixtures(accepts[rows], labels[rows], groups[: rows.size])
        expected[tuple(twice)] = weights[0]
    seen = set()
    for weights in refits.weights[:, 0]:
        match = [key for key, value in expected.items() if np.allclose(weights, value, atol=1e-12)]
        assert len(match) == 1
        seen.add(match[0])
    assert seen == set(expected)


def test_the_many_tables_em_is_the_one_table_em() -> None:
    from collections import Counter

    from schemes.mixture import estimate_mixture

    rng = np.random.default_rng(7)
    tables = []
    for size in (12, 60, 150):
        labels = rng.integers(1, 11, size)
        tables.append((rng.binomial(labels, rng.choice([0.02, 0.7], size)), labels))
    cells = np.unique(np.concatenate([np.stack(table, axis=1) for table in tables]), axis=0)
    many = np.array([[np.sum((a == cell[0]) & (n == cell[1])) for cell in cells] for a, n in tables], dtype=np.float64)
    fitted = budget._mixtures(cells[:, 0], cells[:, 1], many)
    for (a, n), weights in zip(tables, fitted, strict=True):
        reference = estimate_mixture(Counter(zip(a.tolist(), n.tolist(), strict=True))).weights
        assert np.allclose(weights, reference, atol=1e-12, rtol=0)


# ---- the interval widened for the pilot's few units ------------------------------------------------


def test_the_t_quantile_is_students() -> None:
    # Student's t table, two-sided: 90 % at 1, 2, 4 and 17 degrees of freedom, 95 % at 10, 99 % at 30.
    for confidence, df, table in ((0.9, 1, 6.3138), (0.9, 2, 2.9200), (0.9, 4, 2.1318), (0.9, 17, 1.7396)):
        assert budget.t_quantile(confidence, df) == pytest.approx(table, abs=5e-4)
    assert budget.t_quantile(0.95, 10) == pytest.approx(2.2281, abs=5e-4)
    assert budget.t_quantile(0.99, 30) == pytest.approx(2.7500, abs=5e-4)
    # Past 1,000 degrees of freedom the normal's.
    assert budget.t_quantile(0.9, 5000) == pytest.approx(1.6449, abs=5e-4)
    assert budget.small_sample_scale(1, 0.9) == 1.0


def test_the_interval_widens_its_percentiles_by_hand_worked_numbers() -> None:
    # Resampled totals 100 to 200: the nearest 5th and 95th percentiles are 105 and 195, the median
    # 150. From 5 units each arm is widened by sqrt(5 / 4) * t(4) / z = 1.1180 * 2.1318 / 1.6449 =
    # 1.4490: 45 * 1.4490 = 65.2, so 84.8 to 215.2, rounded to 85 and 215.
    spread = np.arange(100, 201, dtype=np.int64)
    assert budget.small_sample_scale(5, 0.9) == pytest.approx(1.4490, abs=1e-4)
    assert budget.resampled_interval(spread, estimate=150, units=5, confidence=0.9) == (85, 215)
    # From many units the percentiles themselves; an estimate outside them is held.
    assert budget.resampled_interval(spread, estimate=150, units=10_000, confidence=0.9) == (105, 195)
    assert budget.resampled_interval(spread, estimate=230, units=10_000, confidence=0.9) == (105, 230)
    # Arms widened from the median, so a skewed spread keeps its shape: 100 to 110, then 200.
    skewed = np.array([100] * 10 + [110] * 80 + [200] * 11, dtype=np.int64)
    assert budget.resampled_interval(skewed, estimate=110, units=5, confidence=0.9) == (110 - 14, 110 + 130)


def _coverage(units: int, repeats: int, seed: int) -> tuple[float, float]:
    """How often the plain percentiles and ``resampled_interval`` of a bootstrap of ``units`` units
    hold the truth: each unit's labels drawn from a skewed distribution of known mean (a gamma of
    mean 1,000), the total per 100 units estimated from the units' mean, 200 resamples."""
    rng = np.random.default_rng(seed)
    plain = widened = 0
    for _ in range(repeats):
        values = rng.gamma(4.0, 250.0, units)
        spread = np.rint(values[rng.integers(0, units, (200, units))].mean(axis=1) * 100).astype(np.int64)
        estimate = round(values.mean() * 100)
        low, high = np.quantile(spread, [0.05, 0.95], method="nearest")
        plain += min(low, estimate) <= 100_000 <= max(high, estimate)
        low, high = budget.resampled_interval(spread, estimate=estimate, units=units, confidence=0.9)
        widened += low <= 100_000 <= high
    return plain / repeats, widened / repeats


def test_the_widened_interval_holds_the_truth_as_often_as_it_says_where_the_percentiles_fall_short() -> None:
    # A percentile bootstrap of few units runs narrow: of 6 units its 90 % holds the truth about
    # three times in four; widened for the units, nearly nine in ten. Of 20 (a 5 % pilot of the dev
    # split) the plain percentiles fall short still, by less.
    plain, widened = _coverage(6, 600, seed=0)
    assert plain <= 0.80
    assert widened >= 0.85
    plain, widened = _coverage(20, 600, seed=1)
    assert plain < 0.87 <= widened
