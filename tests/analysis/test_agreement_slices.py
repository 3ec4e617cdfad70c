"""The agreement figures computed a slice of labels at a time, from narrow columns, equal those
computed from every label at once in 64 bits (the way they were computed before), to the last
digit: on random labels of several sizes and numbers of workers, with slices small enough that
every function walks many of them."""

from __future__ import annotations

import krippendorff
import numpy as np
import numpy.typing as npt
import pandas as pd
import pytest

from analysis import slices
from analysis.agreement import krippendorff_alpha, leave_one_out_agreement, pairwise_cohen_kappa
from schemes.scores import ABSTAIN, ACCEPT, REJECT

SIZES = [1, 7, 1_000, 12_000]
WORKERS = [1, 5, 300, 2_500]


def labels(
    size: int, workers: int, *, seed: int, narrow: bool, grouped: bool
) -> tuple[npt.NDArray[np.integer], npt.NDArray[np.integer], npt.NDArray[np.integer]]:
    """Random labels: about four per candidate, some without a worker, some repeated by one worker."""
    rng = np.random.default_rng(seed)
    candidate = rng.integers(0, max(1, size // 4), size)
    worker = rng.integers(-1, workers, size)
    value = rng.choice([ACCEPT, REJECT, ABSTAIN], size=size, p=[0.45, 0.45, 0.1])
    if grouped:
        order = np.argsort(candidate, kind="stable")
        candidate, worker, value = candidate[order], worker[order], value[order]
    if narrow:
        return candidate.astype(np.int32), worker.astype(np.int32), value.astype(np.int8)
    return candidate, worker, value


@pytest.fixture(params=[97, 5_000, 1 << 18], ids=["slices of 97", "slices of 5000", "one slice"])
def slice_rows(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(slices, "LABEL_SLICE", request.param)
    return int(request.param)


def leave_one_out_at_once(*, candidate, worker, value, collapse_abstain: bool = True) -> pd.DataFrame:  # type: ignore[no-untyped-def]
    """Each worker against the leave-one-out majority, every label at once in 64 bits."""
    candidates = np.asarray(candidate, dtype=np.int64)
    workers = np.asarray(worker, dtype=np.int64)
    codes = np.asarray(value, dtype=np.int64)
    columns = ["worker", "labels", "compared", "agreed", "ties", "agreement"]
    if collapse_abstain:
        codes = np.where(codes == ACCEPT, 0, 1)
    n_values = 2 if collapse_abstain else 3
    n_candidates = int(candidates.max()) + 1
    table = np.bincount(candidates * n_values + codes, minlength=n_candidates * n_values).reshape(
        n_candidates, n_values
    )
    mine = workers >= 0
    others = table[candidates[mine]].copy()
    others[np.arange(others.shape[0]), codes[mine]] -= 1
    has_others = others.sum(axis=1) > 0
    top = others.max(axis=1)
    unique_top = (others == top[:, None]).sum(axis=1) == 1
    compared = has_others & unique_top
    agreed = compared & (others.argmax(axis=1) == codes[mine])
    tie = has_others & ~unique_top
    worker_ids, rank = np.unique(workers[mine], return_inverse=True)
    rank = rank.ravel()

    def per_worker(flags):  # type: ignore[no-untyped-def]
        return np.bincount(rank, weights=flags, minlength=worker_ids.size).astype(np.int64)

    result = pd.DataFrame(
        {
            "worker": worker_ids.astype(np.int64),
            "labels": per_worker(None),
            "compared": per_worker(compared),
            "agreed": per_worker(agreed),
            "ties": per_worker(tie),
        }
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        result["agreement"] = np.where(result["compared"] > 0, result["agreed"] / result["compared"], np.nan)
    return result[columns]


def kappa_cells_at_once(*, candidate, worker, value) -> dict[tuple[int, int], list[int]]:  # type: ignore[no-untyped-def]
    """Each pair of workers' 2 x 2 table, every label at once: a worker's first label on a candidate."""
    first: dict[tuple[int, int], int] = {}
    columns = (np.asarray(candidate).tolist(), np.asarray(worker).tolist(), np.asarray(value).tolist())
    for c, w, v in zip(*columns, strict=True):
        if w >= 0 and v != ABSTAIN:
            first.setdefault((c, w), v)
    by_candidate: dict[int, list[tuple[int, int]]] = {}
    for (c, w), v in first.items():
        by_candidate.setdefault(c, []).append((w, v))
    cells: dict[tuple[int, int], list[int]] = {}
    for judged in by_candidate.values():
        judged.sort()
        for i, (a, va) in enumerate(judged):
            for b, vb in judged[i + 1 :]:
                cell = (va != ACCEPT) * 2 + (vb != ACCEPT)
                cells.setdefault((a, b), [0, 0, 0, 0])[cell] += 1
    return cells


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("collapse_abstain", [True, False])
def test_leave_one_out_by_slices_equals_it_at_once(
    slice_rows: int, size: int, workers: int, collapse_abstain: bool
) -> None:
    for narrow, grouped in [(True, True), (False, False)]:
        candidate, worker, value = labels(size, workers, seed=size + workers, narrow=narrow, grouped=grouped)
        expected = leave_one_out_at_once(
            candidate=candidate, worker=worker, value=value, collapse_abstain=collapse_abstain
        )
        found = leave_one_out_agreement(
            candidate=candidate, worker=worker, value=value, collapse_abstain=collapse_abstain
        )
        pd.testing.assert_frame_equal(found, expected)


def test_leave_one_out_of_sparse_worker_ids_equals_it_at_once(slice_rows: int) -> None:
    # Worker ids far larger than the number of labels: ranked, not counted by id.
    candidate, worker, value = labels(2_000, 40, seed=3, narrow=False, grouped=False)
    worker = np.where(worker >= 0, worker * 1_000_003, -1)
    expected = leave_one_out_at_once(candidate=candidate, worker=worker, value=value)
    pd.testing.assert_frame_equal(leave_one_out_agreement(candidate=candidate, worker=worker, value=value), expected)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("workers", WORKERS)
def test_kappa_by_bands_of_candidates_equals_it_at_once(slice_rows: int, size: int, workers: int) -> None:
    for narrow, grouped in [(True, True), (False, False)]:
        candidate, worker, value = labels(size, workers, seed=size * workers, narrow=narrow, grouped=grouped)
        pairs = pairwise_cohen_kappa(candidate=candidate, worker=worker, value=value)
        expected = kappa_cells_at_once(candidate=candidate, worker=worker, value=value)
        assert sorted(expected) == list(zip(pairs["worker_a"].tolist(), pairs["worker_b"].tolist(), strict=True))
        cells = pairs[["both_accept", "a_accept_b_reject", "a_reject_b_accept", "both_reject"]].to_numpy()
        assert cells.tolist() == [expected[key] for key in sorted(expected)]


def test_kappa_of_large_bands_and_small_slices_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    candidate, worker, value = labels(3_000, 300, seed=11, narrow=True, grouped=True)
    whole = pairwise_cohen_kappa(candidate=candidate, worker=worker, value=value)
    # A candidate with more labels than a slice is a band of its own.
    monkeypatch.setattr(slices, "LABEL_SLICE", 2)
    pd.testing.assert_frame_equal(pairwise_cohen_kappa(candidate=candidate, worker=worker, value=value), whole)


@pytest.mark.parametrize("units", [2, 50, 5_000])
def test_alpha_by_slices_of_units_is_the_package_s_to_the_last_digit(slice_rows: int, units: int) -> None:
    rng = np.random.default_rng(units)
    table = np.stack([rng.integers(0, 11, units), rng.integers(0, 6, units), rng.integers(0, 3, units)], axis=1).astype(
        np.int64
    )
    pairable = table[table.sum(axis=1) >= 2].astype(np.float64)
    expected = krippendorff.alpha(value_counts=pairable, level_of_measurement="nominal")
    assert krippendorff_alpha(table) == expected
    expected_two = krippendorff.alpha(
        value_counts=table[:, :2][table[:, :2].sum(axis=1) >= 2].astype(np.float64), level_of_measurement="nominal"
    )
    assert krippendorff_alpha(table[:, :2]) == expected_two
