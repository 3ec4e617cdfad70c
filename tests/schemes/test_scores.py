import math

import numpy as np
import pytest

from schemes.scores import (
    ScoreThresholds,
    categories,
    category_of,
    count_table,
    encode_values,
    is_acceptable,
    is_conceivable,
    is_inconceivable,
    scores_from_counts,
)

COUNTS = np.array([[2, 1, 0], [0, 3, 0], [0, 2, 1], [5, 4, 1], [0, 0, 0]])


def test_a_score_is_accepts_over_all_valid_labels_with_abstain_as_not_accept() -> None:
    score = scores_from_counts(COUNTS)
    assert score[:4].tolist() == pytest.approx([2 / 3, 0.0, 0.0, 0.5])
    assert math.isnan(score[4])


def test_categories_nest_and_a_score_of_exactly_one_half_is_not_acceptable() -> None:
    score = scores_from_counts(COUNTS)
    assert categories(score).tolist() == ["acceptable", "inconceivable", "inconceivable", "conceivable", "unscored"]
    assert is_acceptable(score).tolist() == [True, False, False, False, False]
    assert is_conceivable(score).tolist() == [True, False, False, True, False]
    assert is_inconceivable(score).tolist() == [False, True, True, False, False]


def test_thresholds_are_parameters() -> None:
    score = scores_from_counts(COUNTS)
    strict = ScoreThresholds(acceptable=0.7, conceivable=0.4)
    assert categories(score, strict).tolist() == [
        "conceivable",
        "inconceivable",
        "inconceivable",
        "conceivable",
        "unscored",
    ]
    assert category_of(0.45, strict) == "conceivable"
    assert category_of(None) == "unscored"
    with pytest.raises(ValueError, match="thresholds"):
        ScoreThresholds(acceptable=0.2, conceivable=0.5)


def test_the_count_table_counts_each_value_per_candidate() -> None:
    codes = encode_values(["accept", "reject", "abstain", "accept", "accept"])
    table = count_table([0, 0, 0, 2, 2], codes, 3)
    assert table.tolist() == [[1, 1, 1], [0, 0, 0], [2, 0, 0]]


def test_an_unknown_label_value_is_named_in_the_error() -> None:
    with pytest.raises(ValueError, match="'maybe'"):
        encode_values(["accept", "maybe"])
