"""The budget planner's maths: the swords rule on hand-worked counts, an exact plan where the rule
decides alone, simulations that match the expected labels, beta-binomial fits and the seam for
other policies."""

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
