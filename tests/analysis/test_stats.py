import random
from fractions import Fraction

import pytest

from analysis.stats import (
    BOTH,
    COINCO_ONLY,
    OTHER,
    THESAURUS_ONLY,
    _exact_mean,
    benchmark_statistics,
    source_group,
)


@pytest.fixture
def statistics() -> dict:
    # Target 0 (noun): acceptable, conceivable, inconceivable. Target 1 (verb): inconceivable,
    # acceptable. Target 2 (adj): no candidates.
    return benchmark_statistics(
        contexts=2,
        target_pos=["noun", "verb", "adj"],
        candidate_target=[0, 0, 0, 1, 1],
        counts=[[3, 0, 0], [1, 2, 0], [0, 2, 1], [0, 3, 0], [2, 1, 0]],
        candidate_source_group=[COINCO_ONLY, BOTH, THESAURUS_ONLY, THESAURUS_ONLY, COINCO_ONLY],
    )


def test_it_counts_what_table_2_counts(statistics: dict) -> None:
    assert (statistics["contexts"], statistics["targets"], statistics["candidates"], statistics["labels"]) == (
        2,
        3,
        5,
        15,
    )
    assert statistics["abstain_share"] == pytest.approx(1 / 15)


def test_per_target_means_divide_by_all_targets(statistics: dict) -> None:
    assert statistics["per_target"] == pytest.approx(
        {"candidates": 5 / 3, "inconceivable": 2 / 3, "conceivable": 1.0, "acceptable": 2 / 3}
    )


def test_nonempty_means_divide_by_targets_having_the_category(statistics: dict) -> None:
    nonempty = statistics["per_target_nonempty"]
    assert nonempty["candidates"] == pytest.approx(5 / 2)
    assert nonempty["inconceivable"] == pytest.approx(1.0)
    assert nonempty["conceivable"] == pytest.approx(3 / 2)
    assert nonempty["acceptable"] == pytest.approx(1.0)
    assert nonempty["targets"]["acceptable"] == 2


def test_it_breaks_down_by_part_of_speech(statistics: dict) -> None:
    noun = statistics["by_pos"]["noun"]
    assert (noun["targets"], noun["candidates"], noun["labels"]) == (1, 3, 9)
    assert noun["per_target"]["conceivable"] == pytest.approx(2.0)
    assert statistics["by_pos"]["adj"]["per_target"]["candidates"] == 0.0
    assert statistics["by_pos"]["adj"]["per_target_nonempty"]["candidates"] is None


def test_it_breaks_down_by_source_with_a_score_histogram(statistics: dict) -> None:
    by_source = statistics["by_source"]
    assert set(by_source) == {COINCO_ONLY, BOTH, THESAURUS_ONLY}
    assert by_source[COINCO_ONLY]["candidates"] == 2
    assert by_source[COINCO_ONLY]["mean_score"] == pytest.approx((1 + 2 / 3) / 2)
    assert by_source[COINCO_ONLY]["acceptable"] == 2
    assert by_source[THESAURUS_ONLY]["inconceivable"] == 2
    histogram = by_source[COINCO_ONLY]["score_histogram"]
    assert histogram["bins"][0] == "0" and histogram["bins"][7] == "(0.6, 0.7]"
    assert histogram["counts"] == [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1]
    # 1/3 lies in (0.3, 0.4]; 3/10 in (0.2, 0.3] despite 0.3 * 10 rounding up in floating point.
    assert by_source[BOTH]["score_histogram"]["counts"][4] == 1


def test_a_score_of_three_tenths_falls_in_its_own_bin() -> None:
    statistics = benchmark_statistics(
        contexts=1,
        target_pos=["noun"],
        candidate_target=[0],
        counts=[[3, 7, 0]],
        candidate_source_group=[OTHER],
    )
    assert statistics["by_source"][OTHER]["score_histogram"]["counts"][3] == 1


@pytest.mark.parametrize(
    ("sources", "group"),
    [
        (["coinco"], COINCO_ONLY),
        (["coinco", "roget"], BOTH),
        (["coinco", "thesaurus"], BOTH),
        (["roget"], THESAURUS_ONLY),
        (["thesaurus", "model"], THESAURUS_ONLY),
        (["model"], OTHER),
        ([], OTHER),
    ],
)
def test_roget_counts_as_the_thesaurus(sources: list[str], group: str) -> None:
    assert source_group(sources) == group


def test_an_empty_benchmark_has_no_means() -> None:
    statistics = benchmark_statistics(
        contexts=0, target_pos=[], candidate_target=[], counts=[], candidate_source_group=[]
    )
    assert statistics["per_target"]["candidates"] is None
    assert statistics["abstain_share"] is None


def test_a_source_groups_mean_score_is_the_exact_mean_rounded_once() -> None:
    """Summed as whole numbers over the scores' powers of two: the float nearest the exact mean, as
    a sum of fractions gives, for scores of every size (the smallest subnormal, thirds, ones) and
    counts of any size, in any order."""
    rng = random.Random(7)
    for _ in range(500):
        scores: dict[float, int] = {}
        for _ in range(rng.randint(1, 60)):
            accepts, labels = rng.randint(0, 30), rng.randint(31, 60)
            value = rng.choice([accepts / labels, rng.random(), 0.0, 1.0, 5e-324, 1 / 3])
            scores[value] = scores.get(value, 0) + rng.randint(1, 10 ** rng.randint(0, 18))
        exact = sum((Fraction(value) * count for value, count in scores.items()), Fraction(0)) / sum(scores.values())
        assert _exact_mean(scores) == float(exact)
        assert _exact_mean(dict(reversed(list(scores.items())))) == float(exact)
    assert _exact_mean({}) is None
