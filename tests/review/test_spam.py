"""Spam decisions from controls, without a database (docs/design.md §5)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from review.spam import (
    AssignmentControls,
    assignment_fails,
    assignments_to_filter,
    below_threshold,
    control_accuracy,
    filtering_changes,
    spam_decisions,
)


def test_an_assignment_fails_if_any_control_is_wrong() -> None:
    assert not assignment_fails(controls_correct=2, controls_total=2)
    assert assignment_fails(controls_correct=1, controls_total=2)
    assert assignment_fails(controls_correct=0, controls_total=2)
    assert not assignment_fails(controls_correct=0, controls_total=0)
    with pytest.raises(ValueError):
        assignment_fails(controls_correct=3, controls_total=2)


def test_a_worker_without_controls_is_never_below_the_threshold() -> None:
    assert control_accuracy(controls_correct=0, controls_total=0) is None
    assert not below_threshold(None, min_control_accuracy=0.9)


def test_accuracy_is_pooled_over_all_of_a_workers_assignments() -> None:
    rows = [
        AssignmentControls(assignment_id=1, worker_id=7, hit_id=10, controls_correct=2, controls_total=2),
        AssignmentControls(assignment_id=2, worker_id=7, hit_id=11, controls_correct=1, controls_total=2),
        AssignmentControls(assignment_id=3, worker_id=8, hit_id=10, controls_correct=2, controls_total=2),
    ] + [
        AssignmentControls(assignment_id=10 + i, worker_id=7, hit_id=20 + i, controls_correct=2, controls_total=2)
        for i in range(3)
    ]
    decisions = spam_decisions(rows, min_control_accuracy=0.9)
    assert decisions[7].accuracy == pytest.approx(9 / 10)
    assert not decisions[7].spammer  # 0.9 is not below 0.9
    assert decisions[7].failed_assignment_ids == (2,)
    assert decisions[7].failed_hit_ids == (11,)
    assert decisions[8].accuracy == 1.0
    assert decisions[8].assignments == 1


def test_a_spammers_every_assignment_is_filtered_even_those_that_passed() -> None:
    rows = [
        AssignmentControls(assignment_id=1, worker_id=7, hit_id=10, controls_correct=2, controls_total=2),
        AssignmentControls(assignment_id=2, worker_id=7, hit_id=11, controls_correct=0, controls_total=2),
        AssignmentControls(assignment_id=3, worker_id=8, hit_id=10, controls_correct=2, controls_total=2),
    ]
    decisions = spam_decisions(rows, min_control_accuracy=0.9)
    spammers = [worker for worker, decision in decisions.items() if decision.spammer]
    assert spammers == [7]
    assert assignments_to_filter(rows, excluded_worker_ids=spammers) == {1, 2}


def test_filtering_changes_flip_only_what_differs() -> None:
    to_filter, to_unfilter = filtering_changes({1: False, 2: True, 3: True, 4: False}, {1, 3})
    assert to_filter == {1}
    assert to_unfilter == {2}


# Each HIT has two controls; an assignment gets 0, 1 or 2 of them right.
controls = st.lists(st.integers(0, 2).map(lambda correct: (correct, 2)), min_size=1, max_size=30)


@given(controls, st.floats(0.0, 1.0))
def test_a_worker_is_a_spammer_exactly_when_the_pooled_accuracy_is_below_the_threshold(
    outcomes: list[tuple[int, int]], threshold: float
) -> None:
    rows = [
        AssignmentControls(assignment_id=i, worker_id=1, hit_id=i, controls_correct=c, controls_total=t)
        for i, (c, t) in enumerate(outcomes)
    ]
    decision = spam_decisions(rows, min_control_accuracy=threshold)[1]
    correct = sum(c for c, _ in outcomes)
    total = sum(t for _, t in outcomes)
    assert decision.spammer == (correct / total < threshold)
    assert decision.controls_total == total
    assert len(decision.failed_assignment_ids) == sum(1 for c, t in outcomes if c < t)


@given(controls, st.floats(0.0, 1.0))
def test_one_more_failed_control_never_rescues_a_spammer(outcomes: list[tuple[int, int]], threshold: float) -> None:
    rows = [
        AssignmentControls(assignment_id=i, worker_id=1, hit_id=i, controls_correct=c, controls_total=t)
        for i, (c, t) in enumerate(outcomes)
    ]
    before = spam_decisions(rows, min_control_accuracy=threshold)[1]
    worse = [
        *rows,
        AssignmentControls(assignment_id=999, worker_id=1, hit_id=999, controls_correct=0, controls_total=2),
    ]
    after = spam_decisions(worse, min_control_accuracy=threshold)[1]
    assert after.accuracy is not None and before.accuracy is not None
    assert after.accuracy <= before.accuracy
    assert not (before.spammer and not after.spammer)


@given(controls, st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_a_stricter_threshold_never_clears_a_spammer(outcomes: list[tuple[int, int]], a: float, b: float) -> None:
    lenient, strict = sorted((a, b))
    rows = [
        AssignmentControls(assignment_id=i, worker_id=1, hit_id=i, controls_correct=c, controls_total=t)
        for i, (c, t) in enumerate(outcomes)
    ]
    if spam_decisions(rows, min_control_accuracy=lenient)[1].spammer:
        assert spam_decisions(rows, min_control_accuracy=strict)[1].spammer
