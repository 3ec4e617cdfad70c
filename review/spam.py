"""Spam decisions from control items (docs/design.md §5, SWORDS App. B.3), as pure functions.

Every HIT carries two controls: the target word itself (expected: accept) and a random
dictionary word (expected: reject or abstain). An assignment fails if any control is
answered wrongly; a worker's control accuracy is pooled over all their assignments in a
benchmark, and a worker below ``min_control_accuracy`` has all their work filtered.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


def assignment_fails(*, controls_correct: int, controls_total: int) -> bool:
    """An assignment fails as soon as one control is wrong."""
    if not 0 <= controls_correct <= controls_total:
        raise ValueError(f"controls_correct={controls_correct} is not within 0..controls_total={controls_total}")
    return controls_correct < controls_total


def control_accuracy(*, controls_correct: int, controls_total: int) -> float | None:
    """Correct control answers / all control answers; None when the worker has answered no control yet."""
    if controls_total == 0:
        return None
    return controls_correct / controls_total


def below_threshold(accuracy: float | None, *, min_control_accuracy: float) -> bool:
    """No controls answered is no evidence: such a worker is never below the threshold."""
    return accuracy is not None and accuracy < min_control_accuracy


@dataclass(frozen=True)
class AssignmentControls:
    """The control outcome of one submitted assignment."""

    assignment_id: int
    worker_id: int
    hit_id: int
    controls_correct: int
    controls_total: int

    @property
    def failed(self) -> bool:
        return assignment_fails(controls_correct=self.controls_correct, controls_total=self.controls_total)


@dataclass(frozen=True)
class WorkerSpamDecision:
    """One worker's standing in a benchmark: their pooled control accuracy and whether it fails."""

    worker_id: int
    assignments: int
    failed_assignment_ids: tuple[int, ...]
    failed_hit_ids: tuple[int, ...]
    controls_correct: int
    controls_total: int
    accuracy: float | None
    spammer: bool
    assignment_ids: tuple[int, ...] = field(default=())


def spam_decisions(
    assignments: Iterable[AssignmentControls], *, min_control_accuracy: float
) -> dict[int, WorkerSpamDecision]:
    """Pool each worker's controls over all their assignments and decide who falls below the threshold.

    The result has one entry per worker that submitted anything, keyed by worker id.
    """
    by_worker: dict[int, list[AssignmentControls]] = {}
    for assignment in assignments:
        by_worker.setdefault(assignment.worker_id, []).append(assignment)
    decisions: dict[int, WorkerSpamDecision] = {}
    for worker_id, rows in by_worker.items():
        rows.sort(key=lambda row: row.assignment_id)
        correct = sum(row.controls_correct for row in rows)
        total = sum(row.controls_total for row in rows)
        accuracy = control_accuracy(controls_correct=correct, controls_total=total)
        failed = [row for row in rows if row.failed]
        decisions[worker_id] = WorkerSpamDecision(
            worker_id=worker_id,
            assignments=len(rows),
            failed_assignment_ids=tuple(row.assignment_id for row in failed),
            failed_hit_ids=tuple(row.hit_id for row in failed),
            controls_correct=correct,
            controls_total=total,
            accuracy=accuracy,
            spammer=below_threshold(accuracy, min_control_accuracy=min_control_accuracy),
            assignment_ids=tuple(row.assignment_id for row in rows),
        )
    return decisions


def assignments_to_filter(assignments: Iterable[AssignmentControls], *, excluded_worker_ids: Iterable[int]) -> set[int]:
    """Ids of the assignments that must not count: every assignment of an excluded worker.

    Filtering is all-or-nothing per worker (docs/design.md §5): a spammer's passing assignments are
    no more trustworthy than their failing ones.
    """
    excluded = set(excluded_worker_ids)
    return {assignment.assignment_id for assignment in assignments if assignment.worker_id in excluded}


def filtering_changes(currently_filtered: Mapping[int, bool], should_filter: set[int]) -> tuple[set[int], set[int]]:
    """(to_filter, to_unfilter): the assignment ids whose filtered flag must flip."""
    to_filter = {pk for pk, filtered in currently_filtered.items() if pk in should_filter and not filtered}
    to_unfilter = {pk for pk, filtered in currently_filtered.items() if pk not in should_filter and filtered}
    return to_filter, to_unfilter
