"""The adaptive rule's prior per candidate source comes from the benchmark's own labels
(docs/design.md §13), and the swords policy has no rule at all."""

from __future__ import annotations

import pytest

from annotation.models import Benchmark, Candidate, Context, Label
from schemes.swords.progress import stopping_rule
from schemes.swords.settings import settings_of
from schemes.swords.stopping import CURTAIL, DEFAULT_PRIOR, change_probability, estimate_prior

pytestmark = pytest.mark.django_db


def _benchmark(policy: str) -> Benchmark:
    benchmark = Benchmark.objects.create(name=f"priors-{policy}", scheme_settings={"stopping_policy": policy})
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
