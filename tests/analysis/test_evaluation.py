"""SWORDS's evaluation maths, as the SWORDS library computes it, on plain values (docs/evaluation.md)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.evaluation import ResultError
from schemes.swords.evaluation.metrics import (
    GoldTarget,
    evaluate,
    gap,
    gold_target,
    oracle_part,
    parse_result,
    system_ranking,
    target_part,
)


def lower(text: str) -> str:
    return text.lower().strip()


def test_the_benchmark_side_drops_the_target_pools_duplicates_and_ignores_abstains() -> None:
    target = gold_target(
        target_lemma="run",
        candidates=[("Run", 4, 0), ("dash", 1, 1), (" Dash", 2, 0), ("hop", 0, 0), ("walk", 0, 3)],
        normalise=lower,
    )

    assert target.scores == {"dash": 0.75, "walk": 0.0}
    assert target.acceptable == {"dash"}
    assert target.conceivable == {"dash"}


def test_the_library_thresholds_are_inclusive_at_a_tenth_and_just_above_a_half() -> None:
    target = GoldTarget(scores={"half": 0.5, "tenth": 0.1, "majority": 0.5001, "less": 0.09})

    assert target.acceptable == {"majority"}
    assert target.conceivable == {"half", "tenth", "majority"}


def test_a_bare_string_scores_minus_its_index() -> None:
    assert parse_result({"substitutes": {"t:1": ["a", "b", ["c", 5]]}}) == {
        "t:1": [("a", 0.0), ("b", -1.0), ("c", 5.0)]
    }


@pytest.mark.parametrize(
    "document", [[], {"substitutes": []}, {"substitutes": {"t:1": "a"}}, {"substitutes": {"t:1": [["a", "high"]]}}]
)
def test_a_malformed_result_is_refused_with_a_reason(document: object) -> None:
    with pytest.raises(ResultError):
        parse_result(document)


def test_the_system_side_sorts_by_score_keeping_file_order_on_ties_and_merges_keeping_the_best() -> None:
    ranking = system_ranking(
        substitutes=[("b", 1.0), ("RUN", 9.0), ("a", 1.0), ("B", 3.0), ("c", 2.0)], target_lemma="run", normalise=lower
    )

    assert ranking == ["b", "c", "a"]


def test_gap_rewards_the_ideal_order_fully_and_weighs_unknown_substitutes_zero() -> None:
    weights = {"a": 1.0, "b": 0.5}

    assert gap(["a", "b"], weights) == 1.0
    # (0 + (0 + 1) / 2 + (0 + 1 + 0.5) / 3) / (1 + 1.5 / 2)
    assert gap(["x", "a", "b"], weights) == pytest.approx((0.5 + 0.5) / 1.75)
    assert gap(["a"], {"a": 0.0}) == -1.0


def test_precision_and_recall_are_summed_over_targets_not_averaged() -> None:
    gold = {"t:1": GoldTarget(scores={"a": 1.0}), "t:2": GoldTarget(scores={"b": 1.0, "c": 1.0, "d": 0.0})}
    rankings = {"t:1": ["a", "z"], "t:2": ["b"]}

    figures = evaluate(gold=gold, rankings=rankings)

    # Hits 2 of 3 listed (strict); 2 of min(10, 1) + min(10, 2) = 3 acceptable.
    assert figures.p10_strict == pytest.approx(200 / 3)
    assert figures.r10_strict == pytest.approx(200 / 3)
    # Lenient drops "z", which the benchmark does not score.
    assert figures.p10_lenient == 100.0
    assert figures.f10_lenient == pytest.approx(2 * 100 * (200 / 3) / (100 + 200 / 3))


def test_a_missing_target_counts_against_recall_and_scores_zero_gap() -> None:
    gold = {"t:1": GoldTarget(scores={"a": 1.0}), "t:2": GoldTarget(scores={"b": 1.0})}

    figures = evaluate(gold=gold, rankings={"t:1": ["a"]})

    assert (figures.p10_lenient, figures.r10_lenient) == (100.0, 50.0)
    assert figures.gap == 50.0
    assert (figures.targets_evaluated, figures.targets_missing) == (1, 1)


def test_a_target_without_scored_candidates_is_not_evaluated() -> None:
    figures = evaluate(gold={"t:1": GoldTarget(scores={"a": 1.0}), "t:2": GoldTarget(scores={})}, rankings={})

    assert (figures.targets_evaluated, figures.targets_missing) == (0, 1)


@settings(max_examples=300, deadline=None)
@given(
    scores=st.dictionaries(
        st.text(alphabet="abcdefghijklmnop", min_size=1, max_size=3),
        st.one_of(st.sampled_from([0.0, 0.1, 0.5, 0.5001, 1.0, 1 / 3, 2 / 3]), st.floats(0, 1)),
        max_size=25,
    )
)
def test_the_oracle_share_of_a_target_equals_its_share_ranked_by_its_own_scores(scores: dict[str, float]) -> None:
    target = GoldTarget(scores=scores)
    ranking = sorted(scores, key=lambda text: -scores[text])
    assert oracle_part(target=target) == target_part(target=target, ranking=ranking)
