"""The kept tallies (annotation.tallies) under writers that overlap on PostgreSQL, one connection per
thread: submits of the same HITs' candidates and a refresh that filters other work of theirs, all at
once, leave the tallies equal to a fresh count, with no deadlock."""

from __future__ import annotations

import pytest

from annotation.models import Worker, WorkerKind
from hits.services import assignment_claim_next, assignment_submit
from review.services import benchmark_refresh
from tests.hits.factories import honest_answers, make_benchmark, make_hits
from tests.hits.test_queue_concurrency import run_in_threads
from tests.review.test_tallies import fresh, kept

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.production_database("row locks need PostgreSQL"),
]

HITS = 3
SLOTS = 4


def test_submits_and_a_refresh_racing_on_the_same_candidates_keep_exact_tallies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The refresh runs here, in a thread of its own, not queued by the submits.
    monkeypatch.setattr("hits.services.queue.refresh_touch", lambda **kwargs: False)
    benchmark = make_benchmark()
    hits = make_hits(benchmark, HITS, assignments_per_hit=SLOTS)
    early = Worker.objects.create(kind=WorkerKind.SIMULATED, external_id="early")
    for _ in range(HITS):
        assignment = assignment_claim_next(worker=early, benchmark=benchmark)
        assert assignment is not None
        assignment_submit(assignment=assignment, answers=honest_answers(assignment.hit))
    # Blocked now: the refresh below filters the early work while the others' labels come in.
    Worker.objects.filter(pk=early.pk).update(blocked=True)
    # A worker holds one claim at a time: one worker per slot left.
    workers = [Worker.objects.create(kind=WorkerKind.SIMULATED, external_id=f"w{n}") for n in range(HITS * (SLOTS - 1))]
    claimed = []
    for worker in workers:
        assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
        assert assignment is not None
        claimed.append(assignment)
    assert {assignment.hit_id for assignment in claimed} == {hit.pk for hit in hits}

    def work(index: int) -> None:
        if index == len(claimed):
            benchmark_refresh(benchmark=benchmark, full=True)
            return
        assignment = claimed[index]
        assignment_submit(assignment=assignment, answers=honest_answers(assignment.hit))

    run_in_threads(work, count=len(claimed) + 1)
    candidates, workers_kept = kept(benchmark)
    assert (candidates, workers_kept) == fresh(benchmark)
    # Every label of the early worker is in their own tally, none in a candidate's.
    assert workers_kept[early.pk] > 0
    assert sum(row[3] for row in candidates.values()) == sum(workers_kept[w.pk] for w in workers)
