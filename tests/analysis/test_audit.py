import pytest

from analysis.audit import accepts_in_first, filter_audit, filter_audit_grid

A, R = 1, 0
SEQUENCES = [
    [R, R, R, A, A, A, A, A, A, A],  # dropped, yet acceptable in full
    [R, R, R, A, R, R, R, R, R, R],  # dropped, one accept, still unacceptable
    [R, R, R, R, R, R, R, R, R, R],  # dropped, never accepted
    [A, R, R, R, R, R, R, R, R, R],  # kept
    [A, A, A, A, A, A, R, R, R, R],  # kept, acceptable
]


def _labels() -> tuple[list[int], list[int]]:
    candidates, accepts = [], []
    # Interleave candidates: collection order only matters within a candidate.
    for position in range(10):
        for row, sequence in enumerate(SEQUENCES):
            candidates.append(row)
            accepts.append(sequence[position])
    return candidates, accepts


def test_it_counts_accepts_among_the_first_labels_in_collection_order() -> None:
    candidates, accepts = _labels()
    early = accepts_in_first(label_candidate=candidates, label_accept=accepts, n_candidates=5, first=3)
    assert early.tolist() == [0, 0, 0, 1, 3]


def test_the_audit_of_a_hand_computed_case() -> None:
    candidates, accepts = _labels()
    early = accepts_in_first(label_candidate=candidates, label_accept=accepts, n_candidates=5, first=3)
    audit = filter_audit(early_accepts=early, accepts=[7, 1, 0, 1, 6], totals=[10] * 5)
    assert audit["audited"] == 5
    assert audit["dropped"] == 3
    assert audit["dropped_with_accept"] == 2
    assert audit["share_dropped_with_accept"] == pytest.approx(2 / 3)
    assert audit["share_still_unacceptable"] == pytest.approx(1 / 2)
    assert audit["share_of_acceptable_lost"] == pytest.approx(1 / 2)


def test_a_stricter_pass_rule_drops_more() -> None:
    candidates, accepts = _labels()
    grid = filter_audit_grid(
        label_candidate=candidates,
        label_accept=accepts,
        n_candidates=5,
        step2_labels_options=[3],
        pass_min_accepts_options=[1, 2],
    )
    assert [row["dropped"] for row in grid] == [3, 4]
    assert grid[1]["step2_labels"] == 3 and grid[1]["pass_min_accepts"] == 2


def test_no_dropped_candidate_means_no_share() -> None:
    audit = filter_audit(early_accepts=[1], accepts=[1], totals=[10])
    assert audit["share_dropped_with_accept"] is None
