import math

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from analysis.agreement import (
    kappa_summary,
    krippendorff_alpha,
    krippendorff_alpha_bootstrap,
    krippendorff_alpha_fast,
    leave_one_out_agreement,
    pairwise_cohen_kappa,
    rbo_against_k,
)
from schemes.scores import ABSTAIN, ACCEPT, REJECT

A, R, U = ACCEPT, REJECT, ABSTAIN


def test_alpha_of_a_hand_computed_table() -> None:
    # Pairable units: two accepts, one of each, two rejects; the single label is not pairable.
    # o_aa = 2, o_rr = 2, n_a = n_r = 3, n = 6: alpha = 1 - 5 * 2 / (36 - 18) = 4/9.
    table = [[2, 0, 0], [1, 1, 0], [0, 2, 0], [1, 0, 0]]
    assert krippendorff_alpha(table) == pytest.approx(4 / 9)
    assert krippendorff_alpha_fast(table) == pytest.approx(4 / 9)


def test_alpha_is_undefined_when_only_one_value_occurs() -> None:
    assert math.isnan(krippendorff_alpha([[3, 0, 0], [2, 0, 0]]))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(*(st.integers(0, 5),) * 3), min_size=2, max_size=40))
def test_the_direct_alpha_matches_the_krippendorff_package(rows: list[tuple[int, int, int]]) -> None:
    table = np.array(rows)
    expected = krippendorff_alpha(table)
    if math.isnan(expected):
        return
    assert krippendorff_alpha_fast(table) == pytest.approx(expected, abs=1e-9)


def test_the_bootstrap_interval_contains_the_estimate_and_is_reproducible() -> None:
    rng = np.random.default_rng(1)
    truth = rng.random(300) < 0.3
    labels = np.where(rng.random((300, 10)) < 0.85, truth[:, None], ~truth[:, None])
    table = np.stack([labels.sum(axis=1), (~labels).sum(axis=1), np.zeros(300, int)], axis=1)
    estimate = krippendorff_alpha_bootstrap(table, resamples=500, seed=3)
    assert estimate.low < estimate.alpha < estimate.high
    assert estimate.alpha == pytest.approx(krippendorff.alpha(value_counts=table, level_of_measurement="nominal"))
    assert estimate == krippendorff_alpha_bootstrap(table, resamples=500, seed=3)
    assert estimate.units == 300 and estimate.labels == 3000


def test_each_worker_is_compared_with_the_majority_of_the_others() -> None:
    # c0: w0 A, w1 A, w2 R -> w0 and w1 tie, w2 disagrees. c1: all three R plus an anonymous A
    # -> all agree. c2: w0 A, w1 R -> both disagree. c3: w2 A and an anonymous A -> w2 agrees.
    candidate = [0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3]
    worker = [0, 1, 2, 0, 1, 2, -1, 0, 1, 2, -1]
    value = [A, A, R, R, R, R, A, A, R, A, A]
    result = leave_one_out_agreement(candidate=candidate, worker=worker, value=value).set_index("worker")
    assert result.loc[0, ["labels", "compared", "agreed", "ties"]].tolist() == [3, 2, 1, 1]
    assert result.loc[0, "agreement"] == pytest.approx(0.5)
    assert result.loc[2, ["labels", "compared", "agreed"]].tolist() == [3, 3, 2]
    assert -1 not in result.index


def test_abstain_is_not_accept_unless_asked_to_compare_three_values() -> None:
    candidate, worker, value = [0, 0, 0], [0, 1, 2], [U, R, R]
    collapsed = leave_one_out_agreement(candidate=candidate, worker=worker, value=value).set_index("worker")
    assert collapsed.loc[0, "agreed"] == 1
    three = leave_one_out_agreement(candidate=candidate, worker=worker, value=value, collapse_abstain=False).set_index(
        "worker"
    )
    assert three.loc[0, "agreed"] == 0


def test_kappa_of_a_hand_computed_pair() -> None:
    # (A, A), (A, R), (R, R), (R, R): observed 3/4, chance 1/2 -> kappa 1/2.
    candidate = [0, 0, 1, 1, 2, 2, 3, 3]
    worker = [0, 1, 0, 1, 0, 1, 0, 1]
    value = [A, A, A, R, R, R, R, R]
    pairs = pairwise_cohen_kappa(candidate=candidate, worker=worker, value=value)
    assert len(pairs) == 1
    row = pairs.iloc[0]
    assert (row["worker_a"], row["worker_b"], row["items"]) == (0, 1, 4)
    assert row["kappa"] == pytest.approx(0.5)
    assert row["observed"] == pytest.approx(0.75)


def test_kappa_leaves_out_abstentions_and_pairs_without_enough_overlap() -> None:
    candidate = [0, 0, 1, 1, 2, 2]
    worker = [0, 1, 0, 1, 0, 2]
    value = [A, A, U, R, R, R]
    pairs = pairwise_cohen_kappa(candidate=candidate, worker=worker, value=value)
    assert pairs[["worker_a", "worker_b", "items"]].values.tolist() == [[0, 1, 1], [0, 2, 1]]
    assert pairwise_cohen_kappa(candidate=candidate, worker=worker, value=value, min_overlap=2).empty


def test_kappa_matches_scikit_learn_on_random_pairs() -> None:
    rng = np.random.default_rng(7)
    n_candidates, n_workers = 200, 6
    rows = []
    for row in range(n_candidates):
        for judge in rng.choice(n_workers, size=4, replace=False):
            rows.append((row, int(judge), int(rng.choice([A, R, U], p=[0.4, 0.5, 0.1]))))
    candidates, workers, values = (np.array(column) for column in zip(*rows, strict=True))
    pairs = pairwise_cohen_kappa(candidate=candidates, worker=workers, value=values)
    assert len(pairs) == n_workers * (n_workers - 1) // 2
    for _, pair in pairs.iterrows():
        first = {c: v for c, w, v in rows if w == pair["worker_a"] and v != U}
        second = {c: v for c, w, v in rows if w == pair["worker_b"] and v != U}
        common = sorted(set(first) & set(second))
        assert pair["items"] == len(common)
        expected = cohen_kappa_score([first[c] for c in common], [second[c] for c in common])
        assert pair["kappa"] == pytest.approx(expected)
    summary = kappa_summary(pairs)
    assert summary["pairs"] == 15 and summary["mean"] == pytest.approx(pairs["kappa"].mean())


def test_rbo_is_one_when_the_re_annotation_ranks_as_the_benchmark_does() -> None:
    # Two targets with two candidates each; the re-annotation accepts exactly the better one.
    points = rbo_against_k(
        candidate_target=[0, 0, 1, 1],
        reference_score=[1.0, 0.0, 0.2, 0.9],
        label_candidate=np.repeat([0, 1, 2, 3], 10),
        label_accept=np.repeat([1, 0, 0, 1], 10),
        ks=[1, 5, 9],
        samples=20,
    )
    assert [point.k for point in points] == [1, 5, 9]
    for point in points:
        assert point.mean == pytest.approx(1.0) and point.std == pytest.approx(0.0)


def test_rbo_of_a_reversed_pair_is_p() -> None:
    # [a, b] against [b, a]: X_1 = 0, X_2 = 2, so RBO_ext = (1-p)/p * p^2 + p^2 = p.
    points = rbo_against_k(
        candidate_target=[0, 0],
        reference_score=[1.0, 0.0],
        label_candidate=np.repeat([0, 1], 10),
        label_accept=np.repeat([0, 1], 10),
        ks=[3],
        samples=5,
        p=0.8,
    )
    assert points[0].mean == pytest.approx(0.8)


def test_rbo_grows_with_k_on_noisy_labels() -> None:
    rng = np.random.default_rng(0)
    n_targets, per_target = 40, 15
    quality = rng.random(n_targets * per_target)
    reference = np.round(quality * 10) / 10
    labels = (rng.random((quality.size, 10)) < quality[:, None]).astype(int)
    points = rbo_against_k(
        candidate_target=np.repeat(np.arange(n_targets), per_target),
        reference_score=reference,
        label_candidate=np.repeat(np.arange(quality.size), 10),
        label_accept=labels.ravel(),
        samples=30,
        seed=1,
    )
    means = [point.mean for point in points]
    assert means[-1] > means[0]
    assert all(point.std > 0 for point in points)
