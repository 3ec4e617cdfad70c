"""The kept count of a worker's submitted HITs per batch (``hits.models.BatchWorkDone``, docs/design.md
§4, "HITs done"): the same as the rows' count after every writer of an assignment, filled by its
migration, and a submit and a crowd sync of the same worker racing each other on PostgreSQL."""

from __future__ import annotations

import importlib
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotation.models import Worker, WorkerKind
from crowds.interface import RemoteAssignment, RemoteStatus
from crowds.services import sync
from hits.models import HIT, SUBMITTED_STATUSES, Assignment, AssignmentStatus, BatchWorkDone
from hits.services import (
    assignment_claim_next,
    assignment_return,
    assignment_submit,
    assignments_expire_overdue,
)
from tests.hits.factories import honest_answers, make_batch, make_benchmark, make_hits
from tests.hits.test_queue_concurrency import run_in_threads

fill_migration = importlib.import_module("hits.migrations.0024_batch_work_done")


def rows_count() -> Counter[tuple[int, int]]:
    """(worker, batch) -> the worker's assignments of the batch in the submitted statuses, from the rows."""
    statuses = [str(status) for status in SUBMITTED_STATUSES]
    return Counter(Assignment.objects.filter(status__in=statuses).values_list("worker_id", "hit__batch_id").iterator())


def kept_count() -> Counter[tuple[int, int]]:
    return Counter(
        {(worker, batch): done for worker, batch, done in BatchWorkDone.objects.values_list("worker", "batch", "done")}
    )


def assert_kept_as_counted() -> None:
    # A Counter's equality ignores the (worker, batch) pairs whose count went back to zero.
    assert +kept_count() == +rows_count()
    assert min(kept_count().values(), default=0) >= 0


def crowd_item(assignment: Assignment, status: str) -> RemoteAssignment:
    return RemoteAssignment(
        external_id=assignment.external_id or f"A{assignment.pk}",
        worker_external_id=f"W{assignment.worker_id}",
        hit_external_id=f"H{assignment.hit_id}",
        status=status,
    )


def crowd_submission(hit: HIT, worker: Worker) -> Assignment:
    """A submission as the crowd's page stores it: written straight in the submitted status."""
    now = timezone.now()
    return Assignment.objects.create(
        hit=hit,
        worker=worker,
        status=AssignmentStatus.SUBMITTED,
        external_id=f"A{hit.pk}-{worker.pk}",
        claimed_at=now - timedelta(minutes=3),
        deadline=now + timedelta(minutes=30),
        submitted_at=now,
    )


@pytest.mark.django_db
def test_the_kept_count_is_the_rows_count_after_every_writer_of_an_assignment() -> None:
    benchmark = make_benchmark()
    batch = make_batch(benchmark, assignments_per_hit=2)
    make_hits(benchmark, 12, batch=batch)
    elsewhere = make_hits(benchmark, 3, batch=make_batch(benchmark, assignments_per_hit=1))
    alice, bob = (Worker.objects.create(kind=WorkerKind.SIMULATED, external_id=name) for name in ("alice", "bob"))

    def claim(worker: Worker) -> Assignment:
        found = assignment_claim_next(worker=worker, batch=batch)
        assert found is not None
        return found

    def submit(worker: Worker) -> Assignment:
        assignment = claim(worker)
        return assignment_submit(assignment=assignment, answers=honest_answers(assignment.hit))

    # Submits (a second submit of the same assignment keeps the first and counts nothing).
    submitted = [submit(alice) for _ in range(4)] + [submit(bob)]
    assignment_submit(assignment=submitted[0], answers=honest_answers(submitted[0].hit))
    assert kept_count()[(alice.pk, batch.pk)] == 4
    assert_kept_as_counted()
    # A return and an expiry count nothing, nor do a claim and a draft of one.
    assignment_return(assignment=claim(alice))
    expired = claim(alice)
    assignments_expire_overdue(now=expired.deadline + timedelta(seconds=1))
    claim(alice)
    assert kept_count()[(alice.pk, batch.pk)] == 4
    assert_kept_as_counted()
    # An expired claim submitted while the HIT still needs it counts.
    assignment_submit(assignment=expired, answers=honest_answers(expired.hit))
    assert kept_count()[(alice.pk, batch.pk)] == 5
    # Approvals and rejections, here or on the crowd (a sync copies them), stay counted.
    Assignment.objects.filter(pk=submitted[0].pk).update(status=AssignmentStatus.APPROVED)
    sync._apply_remote_state(assignment=submitted[1], item=crowd_item(submitted[1], RemoteStatus.APPROVED))
    sync._apply_remote_state(assignment=submitted[2], item=crowd_item(submitted[2], RemoteStatus.REJECTED))
    sync.assignment_flag_unknown(assignment=submitted[3])
    assert kept_count()[(alice.pk, batch.pk)] == 5
    assert_kept_as_counted()
    # A crowd's submission counts in its own batch; the crowd withdrawing submitted work (Prolific's
    # RETURNED, TIMED-OUT) takes it away; withdrawing it twice takes nothing more.
    crowd_submission(elsewhere[0], alice)
    withdrawn = crowd_submission(elsewhere[1], alice)
    assert kept_count()[(alice.pk, elsewhere[0].batch_id)] == 2
    sync._withdrawn_on_crowd(assignment=withdrawn, item=crowd_item(withdrawn, RemoteStatus.RETURNED))
    sync._withdrawn_on_crowd(assignment=withdrawn, item=crowd_item(withdrawn, RemoteStatus.RETURNED))
    sync._withdrawn_on_crowd(assignment=submitted[4], item=crowd_item(submitted[4], RemoteStatus.TIMED_OUT))
    assert kept_count()[(alice.pk, elsewhere[0].batch_id)] == 1
    assert kept_count()[(bob.pk, batch.pk)] == 0
    assert_kept_as_counted()
    # Any writer at all, in one statement over many rows: back to submitted, then all claimed again.
    Assignment.objects.filter(worker=alice, hit__batch=batch).update(status=AssignmentStatus.SUBMITTED)
    assert_kept_as_counted()
    Assignment.objects.filter(worker=alice).update(status=AssignmentStatus.CLAIMED)
    assert_kept_as_counted()
    assert kept_count()[(alice.pk, batch.pk)] == 0
    # A batch deleted takes its counts with it.
    Assignment.objects.filter(worker=alice).update(status=AssignmentStatus.SUBMITTED)
    elsewhere[0].batch.delete()
    assert not BatchWorkDone.objects.filter(batch=elsewhere[0].batch_id).exists()
    assert_kept_as_counted()


@pytest.mark.django_db
def test_the_migration_fills_the_count_from_the_rows() -> None:
    benchmark = make_benchmark()
    hits = make_hits(benchmark, 4, assignments_per_hit=2) + make_hits(benchmark, 2, assignments_per_hit=1)
    workers = [Worker.objects.create(kind=WorkerKind.SIMULATED, external_id=f"w{i}") for i in range(3)]
    for number, hit in enumerate(hits):
        for worker in workers[: 1 + number % 3]:
            crowd_submission(hit, worker)
    Assignment.objects.filter(hit=hits[0]).update(status=AssignmentStatus.RETURNED)
    Assignment.objects.filter(hit=hits[1]).update(status=AssignmentStatus.APPROVED)
    expected = +rows_count()
    assert len(expected) > 3
    BatchWorkDone.objects.all().delete()
    with connection.cursor() as cursor:
        cursor.execute(fill_migration.FILL)
    assert kept_count() == expected


@pytest.mark.django_db(transaction=True)
@pytest.mark.production_database("row locks need PostgreSQL")
def test_a_submit_and_a_crowd_sync_of_the_same_worker_racing_each_other_neither_deadlock_nor_miscount(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # These fixed HITs must stay as they are: the pipeline's refresh would advance their targets.
    monkeypatch.setattr("hits.services.queue.refresh_touch", lambda **kwargs: False)
    monkeypatch.setattr(sync, "tallies_validity_changed", lambda **kwargs: None)
    rounds = 6
    benchmark = make_benchmark()
    batch = make_batch(benchmark, assignments_per_hit=1)
    hits = make_hits(benchmark, 2 * rounds, batch=batch)
    worker = Worker.objects.create(kind=WorkerKind.SIMULATED, external_id="racer")
    # Half the HITs submitted through the crowd (to be withdrawn), the other half claimed and
    # submitted here, one at a time as the page's form does.
    withdrawn = [crowd_submission(hit, worker) for hit in hits[:rounds]]
    assert BatchWorkDone.objects.get(worker=worker, batch=batch).done == rounds

    for number in range(rounds):

        def race(side: int, number: int = number) -> None:
            if side == 0:
                claim = assignment_claim_next(worker=worker, batch=batch)
                assert claim is not None
                assignment_submit(assignment=claim, worker=worker, answers=honest_answers(claim.hit))
            else:
                item = crowd_item(withdrawn[number], RemoteStatus.RETURNED)
                sync._withdrawn_on_crowd(assignment=withdrawn[number], item=item)

        run_in_threads(race, count=2)
    # Each round added one and took one away.
    assert BatchWorkDone.objects.get(worker=worker, batch=batch).done == rounds
    assert_kept_as_counted()
