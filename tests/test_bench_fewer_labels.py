"""The fewer-labels simulator's estimate of what a stop costs a system ranking by the released scores
(bench.fewer_labels.oracle_gap; docs/benchmarks.md, "Fewer labels"), on hand-worked labels."""

from __future__ import annotations

import pytest

from bench.fewer_labels import ReleasedCandidate, oracle_gap

ACCEPT, REJECT, ABSTAIN = "accept", "reject", "abstain"

# One target: the release scores first 2/3, second 1/3, third 0 (so the oracle ranks first, second).
RELEASE = [
    ReleasedCandidate("t", "first", "coinco", (ACCEPT, ACCEPT, REJECT)),
    ReleasedCandidate("t", "second", "roget", (ACCEPT, REJECT, REJECT)),
    ReleasedCandidate("t", "third", "roget", (REJECT, REJECT, REJECT)),
]


def test_the_oracle_scores_100_on_the_released_labels() -> None:
    labels = [candidate.labels for candidate in RELEASE]

    assert oracle_gap(RELEASE, labels, [0, 1, 2]) == pytest.approx(100.0)


def test_a_stop_that_swaps_two_scores_costs_the_oracle_half_its_gap() -> None:
    # Bought: first 0 of 1, second 1 of 1. The weights are 0, 1, 0; the ideal order gives 1 / 1 = 1;
    # the oracle's order (first, second) gives nothing at rank 1 and (0 + 1) / 2 at rank 2: 0.5.
    labels = [(REJECT,), (ACCEPT,), (REJECT,)]

    assert oracle_gap(RELEASE, labels, [0, 1, 2]) == pytest.approx(50.0)


def test_abstains_are_left_out_of_the_score_as_the_evaluation_leaves_them() -> None:
    # first: 1 of 1 once its abstain is left out (not 1 of 2); second 1 of 1: both weigh 1, in order.
    labels = [(ABSTAIN, ACCEPT), (ACCEPT,), (REJECT,)]

    assert oracle_gap(RELEASE, labels, [0, 1, 2]) == pytest.approx(100.0)


def test_a_target_whose_bought_labels_hold_no_accept_is_left_out_of_the_mean() -> None:
    other = ReleasedCandidate("u", "fourth", "roget", (ACCEPT, REJECT, REJECT))
    release = [*RELEASE, other]
    labels = [candidate.labels for candidate in RELEASE] + [(REJECT, REJECT)]

    assert oracle_gap(release, labels, [0, 1, 2, 3]) == pytest.approx(100.0)
