"""Every move of a benchmark's change counter in a transaction is made just before the transaction
commits, whatever order its code runs in (docs/design.md §7, "The counter row is locked last").

The counter row stays locked to the end of the transaction that moves it. A rejection locks the
assignment, records its activity entry (a move of the counter) and then reopens the HIT's slot; a
return locks the HIT's slot counter and then moves the counter. Made where the code asks for them,
each waited for the other and PostgreSQL broke the deadlock by failing one."""

from __future__ import annotations

import pytest
from django.db import OperationalError, connection, transaction
from django.db.models import F
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext

from annotation import changes
from annotation.changes import benchmark_changed, change_key, change_state
from annotation.models import Benchmark, BenchmarkChanges, BenchmarkChangeTargets
from crowds.services import assignment_reject
from hits.models import HIT, Assignment, AssignmentStatus
from tests.lock_race import raced_with_a_return
from tests.review.builders import honest, make_benchmark, simulated, step2_batch, work_once


def _moves() -> list[tuple[int, list[int] | None]]:
    return list(BenchmarkChangeTargets.objects.order_by("change").values_list("benchmark_id", "target_ids"))


@pytest.mark.django_db(transaction=True)
def test_a_rejection_reopening_a_slot_waits_for_a_return_on_the_same_hit_without_a_deadlock() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("row locks are PostgreSQL's")
    benchmark = make_benchmark(targets=1, candidates=4)
    step2_batch(benchmark)
    submitted = work_once(simulated("sam"), benchmark, honest())
    assert submitted is not None and not submitted.filtered
    hit_id = submitted.hit_id
    key_before = change_key(benchmark_id=benchmark.pk)

    # Locks the assignment, records the activity entry, then the HIT's slot counter.
    race = raced_with_a_return(
        hit_id=hit_id,
        benchmark_id=benchmark.pk,
        change=lambda: assignment_reject(assignment=submitted, message="Not usable."),
    )
    assert race.waited, "the rejection never waited for the HIT"

    assert race.returned and race.finished
    assert race.errors == []
    assert Assignment.objects.get(pk=submitted.pk).status == AssignmentStatus.REJECTED
    assert change_key(benchmark_id=benchmark.pk) != key_before


@pytest.mark.django_db
def test_moves_are_made_at_the_end_of_the_outermost_block_once_per_benchmark_in_id_order() -> None:
    first, second = make_benchmark(targets=2, candidates=1), make_benchmark(targets=1, candidates=1)
    one, two = (target.pk for target in first.targets.order_by("pk"))
    made = len(_moves())
    with transaction.atomic():
        benchmark_changed(benchmark_id=second.pk, target_ids=[])
        benchmark_changed(benchmark_id=first.pk, target_ids=[two])
        with transaction.atomic():  # an inner block: the outermost one makes the moves
            benchmark_changed(benchmark_id=first.pk, target_ids=[one])
            benchmark_changed(benchmark_id=second.pk, target_ids=None)
        with transaction.atomic(savepoint=False):
            benchmark_changed(benchmark_id=second.pk, target_ids=[])
        # Nothing is moved before the end of the outermost block.
        assert len(_moves()) == made
    assert _moves()[made:] == [(first.pk, sorted([one, two])), (second.pk, None)]


@pytest.mark.django_db
def test_the_counter_is_the_last_row_the_transaction_writes() -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    step2_batch(benchmark)
    hit = HIT.objects.filter(batch__benchmark=benchmark).first()
    assert hit is not None
    with CaptureQueriesContext(connection) as queries, transaction.atomic():
        benchmark_changed(benchmark_id=benchmark.pk, target_ids=[])
        HIT.objects.filter(pk=hit.pk).update(assignments_active=F("assignments_active"))
    counter = BenchmarkChanges._meta.db_table
    statements = [query["sql"] for query in queries.captured_queries if "SAVEPOINT" not in query["sql"]]
    moved = [index for index, sql in enumerate(statements) if counter in sql]
    locked = [index for index, sql in enumerate(statements) if HIT._meta.db_table in sql and "UPDATE" in sql]
    assert moved and locked and locked[-1] < moved[0]


@pytest.mark.django_db
def test_a_block_rolled_back_to_its_savepoint_drops_the_moves_held_inside_it() -> None:
    first, second = make_benchmark(targets=1, candidates=1), make_benchmark(targets=1, candidates=1)
    made = len(_moves())
    with transaction.atomic():
        benchmark_changed(benchmark_id=second.pk, target_ids=[])
        with pytest.raises(RuntimeError), transaction.atomic():
            benchmark_changed(benchmark_id=first.pk, target_ids=[])
            with transaction.atomic():
                benchmark_changed(benchmark_id=second.pk, target_ids=None)
            raise RuntimeError("the inner change fails")
    assert _moves()[made:] == [(second.pk, [])]


@pytest.mark.django_db
def test_a_block_left_by_an_error_makes_no_move_and_the_next_move_outside_is_made_at_once() -> None:
    benchmark = make_benchmark(targets=1, candidates=1)
    key = change_key(benchmark_id=benchmark.pk)
    with pytest.raises(RuntimeError), transaction.atomic():
        benchmark_changed(benchmark_id=benchmark.pk, target_ids=[])
        raise RuntimeError("the change failed")
    assert change_key(benchmark_id=benchmark.pk) == key
    # Outside any block of the platform's (autocommit), a move is made at once.
    benchmark_changed(benchmark_id=benchmark.pk, target_ids=[])
    assert change_key(benchmark_id=benchmark.pk) != key


@pytest.mark.django_db
def test_the_change_key_of_a_held_move_read_in_its_transaction_is_the_moved_one() -> None:
    benchmark, other = make_benchmark(targets=1, candidates=1), make_benchmark(targets=1, candidates=1)
    before, other_before = change_key(benchmark_id=benchmark.pk), change_key(benchmark_id=other.pk)
    state_before = change_state(benchmark_id=benchmark.pk)
    with transaction.atomic():
        benchmark_changed(benchmark_id=benchmark.pk, target_ids=[])
        benchmark_changed(benchmark_id=other.pk, target_ids=[])
        # Read before its commit, a held move is made then, so figures read now are never kept
        # under the key of the data before the change.
        moved = change_key(benchmark_id=benchmark.pk)
        assert moved != before
        assert change_key(benchmark_id=benchmark.pk) == moved, "made once, not at every read"
        assert change_state(benchmark_id=benchmark.pk) != state_before
    assert change_key(benchmark_id=benchmark.pk) == moved, "the commit made no second move"
    assert change_key(benchmark_id=other.pk) != other_before


@pytest.mark.django_db(transaction=True)
def test_a_move_in_a_transaction_opened_without_an_atomic_block_is_refused() -> None:
    benchmark = make_benchmark(targets=1, candidates=1)
    transaction.set_autocommit(False)
    try:
        with pytest.raises(TransactionManagementError):
            benchmark_changed(benchmark_id=benchmark.pk, target_ids=[])
    finally:
        transaction.rollback()
        transaction.set_autocommit(True)


@pytest.mark.django_db
def test_a_move_that_fails_before_the_commit_rolls_the_whole_block_back(monkeypatch: pytest.MonkeyPatch) -> None:
    benchmark = make_benchmark(targets=1, candidates=1)
    key = change_key(benchmark_id=benchmark.pk)

    def fails(**kwargs: object) -> None:
        raise OperationalError("the counter's move failed")

    monkeypatch.setattr(changes, "_move", fails)
    with pytest.raises(OperationalError), transaction.atomic():
        Benchmark.objects.filter(pk=benchmark.pk).update(name="renamed")
        benchmark_changed(benchmark_id=benchmark.pk, target_ids=[])
    assert Benchmark.objects.get(pk=benchmark.pk).name == benchmark.name
    # The connection is whole again: the next block commits.
    monkeypatch.undo()
    with transaction.atomic():
        benchmark_changed(benchmark_id=benchmark.pk, target_ids=[])
    assert change_key(benchmark_id=benchmark.pk) != key
