import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.rbo import rbo_ext, rbo_ext_same_items


def test_identical_rankings_score_one_and_disjoint_ones_zero() -> None:
    assert rbo_ext("abcde", "abcde") == pytest.approx(1.0)
    assert rbo_ext("abc", "xyz") == pytest.approx(0.0)


def test_a_hand_computed_swap() -> None:
    # X = 1, 1, 3; p = 1/2: (1/2 + 1/8 + 1/8) + 1 * 1/8 = 7/8.
    assert rbo_ext(["a", "b", "c"], ["a", "c", "b"], p=0.5) == pytest.approx(7 / 8)


def test_a_hand_computed_pair_of_uneven_lists() -> None:
    # S = [a, b], L = [b, c, a], p = 1/2: X_1 = 0, X_2 = 1, X_3 = 2;
    # (1/8 + 1/12) + 1/48 + (1/3 + 1/2) / 8 = 1/3.
    assert rbo_ext(["a", "b"], ["b", "c", "a"], p=0.5) == pytest.approx(1 / 3)
    assert rbo_ext(["b", "c", "a"], ["a", "b"], p=0.5) == pytest.approx(1 / 3)


def test_it_refuses_repeated_items_and_a_bad_p() -> None:
    with pytest.raises(ValueError, match="at most once"):
        rbo_ext(["a", "a"], ["a"])
    with pytest.raises(ValueError, match="p must"):
        rbo_ext(["a"], ["a"], p=1.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.permutations(list(range(12))).map(list), min_size=1, max_size=6), st.floats(0.05, 0.95))
def test_the_vectorised_form_matches_the_list_form(orders: list[list[int]], p: float) -> None:
    groups, first, second, expected = [], [], [], []
    for group, order in enumerate(orders):
        size = 1 + group * 2 % 12
        order = [item for item in order if item < size]
        reference = list(range(size))
        for item in reference:
            groups.append(group)
            first.append(item)
            second.append(order.index(item))
        expected.append(rbo_ext(reference, order, p=p))
    result = rbo_ext_same_items(np.array(groups), np.array(first), np.array(second), p=p)
    assert result == pytest.approx(expected)
