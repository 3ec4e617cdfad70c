from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from annotation.models import Worker
from hits.models import HIT, Assignment, AssignmentStatus, BatchStatus
from hits.services import assignment_claim_next, assignment_submit, queue
from tests.base import Cast
from tests.hits.factories import honest_answers, make_batch, make_benchmark, make_hit, make_hits, make_target

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True, params=["one statement", "in steps"])
def claim_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every rule holds on both paths of a claim: PostgreSQL's one statement and the portable steps
    (what SQLite, the embedded default, runs)."""
    monkeypatch.setattr(queue, "CLAIM_IN_ONE_STATEMENT", request.param == "one statement")


def worker(user: User) -> Worker:
    return Worker.objects.get(user=user)


def test_it_gives_a_worker_a_slot_with_a_deadline(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1)
    now = timezone.now()

    assignment = assignment_claim_next(worker=worker(cast.alice), now=now)

    assert assignment is not None
    assert assignment.hit == hit
    assert assignment.status == AssignmentStatus.CLAIMED
    assert assignment.claimed_at == now
    assert assignment.deadline == now + hit.batch.assignment_duration
    hit.refresh_from_db()
    assert hit.assignments_active == 1


def test_it_resumes_a_live_claim_instead_of_taking_a_second_slot(cast: Cast) -> None:
    make_hits(make_benchmark(), 3)
    first = assignment_claim_next(worker=worker(cast.alice))
    again = assignment_claim_next(worker=worker(cast.alice))

    assert again == first
    assert Assignment.objects.count() == 1
    assert sum(HIT.objects.values_list("assignments_active", flat=True)) == 1


def test_a_worker_never_takes_the_same_hit_twice(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1)
    first = assignment_claim_next(worker=worker(cast.alice))
    assert first is not None
    assignment_submit(assignment=first, answers=honest_answers(hit))

    assert assignment_claim_next(worker=worker(cast.alice)) is None


def test_it_never_assigns_more_than_the_hit_requires(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1, assignments_per_hit=2)

    assert assignment_claim_next(worker=worker(cast.alice)) is not None
    assert assignment_claim_next(worker=worker(cast.bob)) is not None
    assert assignment_claim_next(worker=worker(cast.carol)) is None
    hit.refresh_from_db()
    assert hit.assignments_active == 2


def test_a_blocked_worker_gets_nothing(cast: Cast) -> None:
    make_hits(make_benchmark(), 2)
    Worker.objects.filter(user=cast.spammer).update(blocked=True)

    assert assignment_claim_next(worker=worker(cast.spammer)) is None
    assert not Assignment.objects.exists()


def test_it_skips_hits_with_a_candidate_the_worker_already_judged(cast: Cast) -> None:
    benchmark = make_benchmark()
    target = make_target(benchmark)
    step2 = make_hit(make_batch(benchmark, step=2), target)
    first = assignment_claim_next(worker=worker(cast.alice))
    assert first is not None and first.hit == step2
    assignment_submit(assignment=first, answers=honest_answers(step2))
    # Step 3 asks again about the same candidates: alice must not judge them twice.
    make_hit(make_batch(benchmark, step=3, assignments_per_hit=7), target)

    assert assignment_claim_next(worker=worker(cast.alice)) is None
    assert assignment_claim_next(worker=worker(cast.bob)) is not None


def test_small_teams_may_relax_the_distinct_workers_rule(cast: Cast) -> None:
    benchmark = make_benchmark(distinct_workers_per_candidate=False)
    target = make_target(benchmark)
    step2 = make_hit(make_batch(benchmark, step=2), target)
    first = assignment_claim_next(worker=worker(cast.alice))
    assert first is not None
    assignment_submit(assignment=first, answers=honest_answers(step2))
    step3 = make_hit(make_batch(benchmark, step=3, assignments_per_hit=7), target)

    second = assignment_claim_next(worker=worker(cast.alice))
    assert second is not None and second.hit == step3


def test_it_skips_hits_sharing_a_candidate_with_a_claim_in_hand(cast: Cast) -> None:
    benchmark = make_benchmark()
    target = make_target(benchmark)
    batch_a = make_batch(benchmark)
    batch_b = make_batch(benchmark)
    make_hit(batch_a, target)
    make_hit(batch_b, target)

    held = assignment_claim_next(worker=worker(cast.alice), batch=batch_a)
    assert held is not None
    assert assignment_claim_next(worker=worker(cast.alice), batch=batch_b) is None


def test_it_fills_hits_before_spreading_and_serves_older_batches_first(cast: Cast) -> None:
    benchmark = make_benchmark()
    old_batch = make_batch(benchmark)
    new_batch = make_batch(benchmark)
    newer = make_hit(new_batch, make_target(benchmark))
    empty, started = make_hit(old_batch, make_target(benchmark)), make_hit(old_batch, make_target(benchmark))
    bob = assignment_claim_next(worker=worker(cast.bob))
    assert bob is not None and bob.hit == empty  # all equal: lowest id of the oldest batch
    # Now `empty` has one slot taken: carol joins it rather than starting `started`.
    carol = assignment_claim_next(worker=worker(cast.carol))
    assert carol is not None and carol.hit == empty
    alice = assignment_claim_next(worker=worker(cast.alice))
    assert alice is not None and alice.hit == empty
    spammer = assignment_claim_next(worker=worker(cast.spammer))
    assert spammer is not None and spammer.hit == started
    assert newer.assignments.count() == 0


def test_closed_and_mturk_batches_are_not_offered(cast: Cast) -> None:
    benchmark = make_benchmark()
    make_hits(benchmark, 1, status=BatchStatus.CLOSED)
    mturk = make_batch(benchmark)
    mturk.backend = "mturk"
    mturk.save()
    make_hit(mturk, make_target(benchmark))

    assert assignment_claim_next(worker=worker(cast.alice)) is None


def test_claims_can_be_limited_to_a_batch_or_a_benchmark(cast: Cast) -> None:
    first, second = make_benchmark(), make_benchmark()
    [in_first] = make_hits(first, 1)
    [in_second] = make_hits(second, 1)

    by_benchmark = assignment_claim_next(worker=worker(cast.alice), benchmark=second)
    assert by_benchmark is not None and by_benchmark.hit == in_second
    by_batch = assignment_claim_next(worker=worker(cast.bob), batch=in_first.batch)
    assert by_batch is not None and by_batch.hit == in_first


def test_an_overdue_claim_of_the_worker_expires_when_they_ask_again(cast: Cast) -> None:
    hits = make_hits(make_benchmark(), 2)
    start = timezone.now()
    first = assignment_claim_next(worker=worker(cast.alice), now=start)
    assert first is not None

    later = start + hits[0].batch.assignment_duration + timedelta(seconds=1)
    second = assignment_claim_next(worker=worker(cast.alice), now=later)

    first.refresh_from_db()
    assert first.status == AssignmentStatus.EXPIRED
    assert second is not None and second.hit != first.hit
    assert [hit.assignments_active for hit in HIT.objects.order_by("id")] == (
        [0, 1] if first.hit == hits[0] else [1, 0]
    )
