"""The adaptive rule's prior per candidate source comes from the benchmark's own labels
(docs/design.md §13), and the swords policy has no rule at all."""

from __future__ import annotations

import pytest

from annotation.models import Benchmark, Candidate, Context, Label
from schemes.swords.progress import stopping_rule
from schemes.swords.settings import settings_of
from schemes.swords.stopping import (
    CURTAIL,
    DEFAULT_PRIOR,
    GRID,
    UNIFORM_MIXTURE,
    MixturePrior,
    change_probabilities,
    change_probability,
    estimate_mixture,
    estimate_prior,
)

pytestmark = pytest.mark.django_db


def _benchmark(policy: str, prior: str = "beta") -> Benchmark:
    benchmark = Benchmark.objects.create(
        name=f"priors-{policy}-{prior}", scheme_settings={"stopping_policy": policy, "adaptive_prior": prior}
    )
    text = "The river was calm after the storm."
    context = Context.objects.create(benchmark=benchmark, text=text)
    target = context.targets.create(benchmark=benchmark, word="calm", offset=text.index("calm"), pos="adj")
    # Roget: 20 candidates with 3 imported rejects, 4 with 3 accepts; CoInCo: 5 with 2 accepts of 3.
    rows = (
        [("roget", ["reject"] * 3)] * 20
        + [("roget", ["accept"] * 3)] * 4
        + [("coinco", ["accept"] * 2 + ["reject"])] * 5
    )
    for index, (source, values) in enumerate(rows):
        candidate = Candidate.objects.create(target=target, text=f"word{index}", sources=[source])
        Label.objects.bulk_create(
            Label(candidate=candidate, value=value, position=position, origin="release.json")
            for position, value in enumerate(values)
        )
    return benchmark


def test_each_source_with_enough_candidates_gets_its_own_prior() -> None:
    benchmark = _benchmark("adaptive")
    rule = stopping_rule(benchmark=benchmark, settings=settings_of(benchmark))
    assert rule is not None
    assert rule.priors["roget"] == estimate_prior([(0, 3)] * 20 + [(3, 3)] * 4)
    # Roget's accepts are rare: its prior's mean is 12.5 / 73 = 0.17, below the uniform prior's 0.5.
    mean = rule.priors["roget"].alpha / (rule.priors["roget"].alpha + rule.priors["roget"].beta)
    assert mean == pytest.approx(12.5 / 73)
    # Five CoInCo candidates are fewer than the estimate needs (MIN_CANDIDATES_FOR_PRIOR).
    assert rule.prior("coinco") == DEFAULT_PRIOR
    # Under roget's prior, a change after 0 of 3 is less likely than under the uniform prior (7/11).
    roget = change_probability(0, 3, maximum=10, prior=rule.prior("roget"))
    assert roget < change_probability(0, 3, maximum=10, prior=rule.prior("coinco")) == pytest.approx(7 / 11)


def test_curtail_needs_no_prior_and_swords_no_rule() -> None:
    curtail = _benchmark("curtail")
    rule = stopping_rule(benchmark=curtail, settings=settings_of(curtail))
    assert rule is not None and rule.policy == CURTAIL and rule.priors == {}
    swords = _benchmark("swords")
    assert stopping_rule(benchmark=swords, settings=settings_of(swords)) is None


def test_the_mixture_prior_is_fitted_per_source_from_one_table_of_counts() -> None:
    benchmark = _benchmark("adaptive", prior="mixture")
    rule = stopping_rule(benchmark=benchmark, settings=settings_of(benchmark))
    assert rule is not None and rule.epsilon_conceivable == settings_of(benchmark).adaptive_epsilon_conceivable
    roget = rule.prior("roget")
    assert isinstance(roget, MixturePrior)
    assert roget == estimate_mixture({(0, 3): 20, (3, 3): 4})
    # Two humps, as the labels have them: most weight near a share of 0, the rest near 1; little between.
    low = sum(weight for weight, share in zip(roget.weights, GRID, strict=True) if share < 0.2)
    high = sum(weight for weight, share in zip(roget.weights, GRID, strict=True) if share > 0.7)
    assert low == pytest.approx(20 / 24, abs=0.02) and high == pytest.approx(4 / 24, abs=0.02)
    assert 1 - low - high < 0.01
    # CoInCo's five candidates are too few: the uniform weights.
    assert "coinco" not in rule.priors or rule.prior("coinco") == UNIFORM_MIXTURE
    # After 0 of 3 a roget candidate is almost surely of the low hump: an accept among the 7 to come
    # is about as likely as one label at that hump's share is an accept, times seven.
    conceivable = change_probabilities(0, 3, maximum=10, prior=roget)[1]
    assert 0 < conceivable < 7 * 0.1


def test_the_stop_may_read_labels_weighed_by_the_dawid_skene_reliability() -> None:
    from analysis.services import benchmark_aggregation
    from schemes.swords.stopping import weighted_counts

    benchmark = _benchmark("adaptive", prior="mixture")
    benchmark.scheme_settings = {**benchmark.scheme_settings, "adaptive_evidence": "dawid_skene"}
    benchmark.save(update_fields=["scheme_settings"])
    rule = stopping_rule(benchmark=benchmark, settings=settings_of(benchmark))
    assert rule is not None
    # The imported labels name no worker: they share the fit's pooled reliability.
    fitted = benchmark_aggregation(benchmark=benchmark, method="dawid_skene")
    assert fitted.workerless_reliability is not None
    weight = fitted.workerless_reliability
    candidates = Candidate.objects.filter(target__benchmark=benchmark)
    assert set(rule.evidence) == set(candidates.values_list("pk", flat=True))
    for candidate in candidates:
        values = list(candidate.labels.values_list("value", flat=True))
        assert rule.evidence[candidate.pk] == weighted_counts([(value == "accept", weight) for value in values])
    # Under counts, the rule reads the raw counts.
    plain = _benchmark("adaptive", prior="beta")
    plain_rule = stopping_rule(benchmark=plain, settings=settings_of(plain))
    assert plain_rule is not None and plain_rule.evidence == {}
