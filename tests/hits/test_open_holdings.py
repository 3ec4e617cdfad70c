"""What open batches hold, read for every step at once (``hits.selectors.open_batch_holdings_by_step``,
one statement however many steps): the same as each step's holdings read apart, and as a count HIT by
HIT in Python, with batches of two steps open, one closed, and a HIT whose work is all in. And the
required and valid work the pipeline sums from the rows the batches' shares read
(``hits.selectors.shares.hit_work_rows``, docs/design.md §7 "Incremental figures"): the same as read apart."""

from __future__ import annotations

import pytest

from annotation.models import Worker
from hits.models import HIT, Assignment, AssignmentStatus, BatchStatus
from hits.selectors import open_batch_holdings, open_batch_holdings_by_step
from hits.selectors.shares import hit_work_rows
from hits.services import assignment_claim_next, assignment_submit
from review.selectors import collected_work
from tests.base import Cast
from tests.hits.factories import honest_answers, make_batch, make_benchmark, make_hit, make_target

pytestmark = pytest.mark.django_db


def _counted(benchmark_id: int, step: int, target_ids: set[int] | None) -> tuple[dict[int, int], dict[int, int]]:
    """A step's holdings counted HIT by HIT: the items of HITs of open batches still short of valid work."""
    candidates: dict[int, int] = {}
    targets: dict[int, int] = {}
    for hit in HIT.objects.filter(batch__benchmark_id=benchmark_id, batch__step=step).select_related("batch"):
        if hit.batch.status == BatchStatus.CLOSED or (target_ids is not None and hit.target_id not in target_ids):
            continue
        valid = sum(
            1 for each in hit.assignments.all() if each.status in ("submitted", "approved") and not each.filtered
        )
        if valid >= hit.assignments_required:
            continue
        for item in hit.items.all():
            if item.candidate_id is not None:
                candidates[item.candidate_id] = hit.batch_id
            targets[hit.target_id] = hit.batch_id
    return candidates, targets


def test_every_steps_holdings_read_at_once_equal_each_steps_read_apart(cast: Cast) -> None:
    benchmark = make_benchmark()
    first, second, third = (make_target(benchmark) for _ in range(3))
    step2 = make_batch(benchmark, step=2, assignments_per_hit=1)
    done = make_hit(step2, first)
    make_hit(step2, second)
    make_hit(make_batch(benchmark, step=3, assignments_per_hit=2), third)
    make_hit(make_batch(benchmark, step=3, status=BatchStatus.CLOSED), second)
    worker = Worker.objects.get(user=cast.alice)
    assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
    assert assignment is not None and assignment.hit_id == done.pk
    assignment_submit(assignment=assignment, answers=honest_answers(done))

    for target_ids in (None, [first.pk, third.pk], [second.pk]):
        wanted = None if target_ids is None else set(target_ids)
        together = open_batch_holdings_by_step(benchmark=benchmark, target_ids=target_ids)
        for step in (2, 3):
            counted = _counted(benchmark.pk, step, wanted)
            assert together.get(step, ({}, {})) == counted, (step, target_ids)
            assert open_batch_holdings(benchmark=benchmark, step=step, target_ids=target_ids) == counted
        work = collected_work(benchmark=benchmark, target_ids=target_ids)
        for step in (2, 3):
            counted = _counted(benchmark.pk, step, wanted)
            assert work.open_candidates.get(step, frozenset()) == frozenset(counted[0])
            assert work.open_targets.get(step, frozenset()) == frozenset(counted[1])
    # The case occurred: step 3 holds a candidate, step 2 holds one target and not the finished one.
    whole = open_batch_holdings_by_step(benchmark=benchmark)
    assert set(whole) == {2, 3} and whole[3][0] and set(whole[2][1]) == {second.pk}


def test_the_work_summed_from_the_shares_rows_equals_the_work_read_apart(cast: Cast) -> None:
    """``collected_work`` from the rows the batches' shares read (``hits.selectors.shares.hit_work_rows``)
    equals its own read: closed batches' HITs left out of the required work, filtered and claimed
    work out of the valid work, by target and step."""
    benchmark = make_benchmark()
    first, second, third = (make_target(benchmark) for _ in range(3))
    step2 = make_batch(benchmark, step=2, assignments_per_hit=2)
    make_hit(step2, first)
    make_hit(step2, second)
    make_hit(make_batch(benchmark, step=3, assignments_per_hit=2), first)
    closed = make_batch(benchmark, step=2, status=BatchStatus.OPEN)
    make_hit(closed, third)
    submitted = []
    for user in (cast.alice, cast.bob, cast.carol):
        worker = Worker.objects.get(user=user)
        for _ in range(2):
            assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
            if assignment is None:
                break
            if user == cast.carol:
                break  # carol's claim stays claimed
            assignment_submit(assignment=assignment, answers=honest_answers(HIT.objects.get(pk=assignment.hit_id)))
            submitted.append(assignment.pk)
    Assignment.objects.filter(pk=submitted[0]).update(filtered=True)
    closed.status = BatchStatus.CLOSED
    closed.save(update_fields=["status"])
    assert Assignment.objects.filter(status=AssignmentStatus.CLAIMED).exists()
    assert len(submitted) >= 3

    for target_ids in ([first.pk], [first.pk, second.pk, third.pk], [third.pk]):
        apart = collected_work(benchmark=benchmark, target_ids=target_ids)
        summed = collected_work(
            benchmark=benchmark, target_ids=target_ids, rows=hit_work_rows(benchmark.pk, target_ids)
        )
        assert summed == apart, target_ids
    every = [first.pk, second.pk, third.pk]
    whole = collected_work(benchmark=benchmark, target_ids=every)
    assert any(step == 3 for _, step in whole.required_assignments), "a step-3 HIT's work is required"
    assert (third.pk, 2) not in whole.required_assignments, "a closed batch requires nothing"
