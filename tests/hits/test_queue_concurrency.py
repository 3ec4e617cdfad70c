"""Claims racing each other on PostgreSQL, one database connection per thread."""

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connections

from annotation.models import Label, Worker, WorkerKind
from hits.models import HIT, Assignment, AssignmentStatus
from hits.services import assignment_claim_next, assignment_submit
from tests.hits.factories import honest_answers, make_benchmark, make_hits

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.production_database("row locks need PostgreSQL"),
]

THREADS = 16


@pytest.fixture(autouse=True)
def _without_the_pipeline(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests count claims on fixed HITs; the pipeline's refresh (queued on each commit here)
    would advance targets and add step-3 HITs under them."""
    monkeypatch.setattr("hits.services.queue.refresh_touch", lambda **kwargs: False)


def run_in_threads(work: Callable[[int], Any], count: int = THREADS) -> list[Any]:
    """Run ``work(i)`` in ``count`` threads released together; re-raise the first error."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count
    errors: list[BaseException] = []

    def main(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[index] = work(index)
        except BaseException as error:  # handed to the test thread below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=main, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a claim thread hung"
    if errors:
        raise errors[0]
    return results


def test_many_workers_claiming_at_once_never_over_assign_a_hit() -> None:
    hits = make_hits(make_benchmark(), 5, assignments_per_hit=3)
    batch = hits[0].batch
    workers = [Worker.objects.create(kind=WorkerKind.SIMULATED, external_id=f"w{i}") for i in range(THREADS)]

    def work(index: int) -> list[int]:
        # Each worker claims and submits until the batch runs dry (bounded: 5 HITs at most). The
        # claims stay in this batch: completed targets advance to step 3, whose new HITs are not
        # what this test counts.
        taken = []
        for _ in range(len(hits) + 1):
            assignment = assignment_claim_next(worker=workers[index], batch=batch)
            if assignment is None:
                break
            taken.append(assignment.hit_id)
            assignment_submit(assignment=assignment, answers=honest_answers(assignment.hit))
        return taken

    taken = run_in_threads(work)

    per_hit = Counter(hit_id for worker_hits in taken for hit_id in worker_hits)
    assert per_hit == {hit.pk: 3 for hit in hits}
    for worker_hits in taken:
        assert len(worker_hits) == len(set(worker_hits)), "a worker got the same HIT twice"
    for hit in HIT.objects.filter(pk__in=[hit.pk for hit in hits]):
        assert hit.assignments_active == 3
    mine = Assignment.objects.filter(hit__in=hits, status=AssignmentStatus.SUBMITTED)
    assert mine.count() == 15
    assert Label.objects.filter(assignment__in=mine).count() == 15 * 4


def test_one_worker_clicking_many_times_at_once_holds_one_claim() -> None:
    make_hits(make_benchmark(), 4, assignments_per_hit=3)
    worker = Worker.objects.create(kind=WorkerKind.SIMULATED, external_id="double-clicker")

    claimed = run_in_threads(lambda _: assignment_claim_next(worker=worker).pk)  # type: ignore[union-attr]

    assert len(set(claimed)) == 1
    assert Assignment.objects.count() == 1
    assert sum(HIT.objects.values_list("assignments_active", flat=True)) == 1


def test_a_double_submit_racing_itself_stores_one_set_of_labels() -> None:
    [hit] = make_hits(make_benchmark(), 1)
    worker = Worker.objects.create(kind=WorkerKind.SIMULATED, external_id="impatient")
    assignment = assignment_claim_next(worker=worker)
    assert assignment is not None
    answers = honest_answers(hit)

    run_in_threads(lambda _: assignment_submit(assignment=assignment, answers=answers), count=8)

    assert Label.objects.filter(assignment=assignment).count() == 4
    assert HIT.objects.get().assignments_active == 1
