"""The projects open to one annotator (docs/design.md §11): the selector's rules and counts, the
statements it costs, and the claim that passes over a batch just returned from."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Benchmark, Label, TargetStage, Worker
from hits.models import HIT, Assignment, AssignmentStatus, Batch, BatchStatus, HITReservation
from hits.selectors import Project, Qualification, work_projects
from hits.services import assignment_claim_next, assignment_return, assignment_submit, queue
from tests.base import Cast
from tests.hits.factories import honest_answers, make_batch, make_benchmark, make_hit, make_hits, make_target
from tests.hits.qualification_data import take, with_test

pytestmark = pytest.mark.django_db


def left(worker: Worker) -> dict[int, int]:
    return {project.batch_id: project.hits_left for project in work_projects(worker=worker)}


def claimable(worker: Worker, batch: Batch) -> int:
    """How many HITs of ``batch`` the claim hands ``worker`` one after the other (each given back)."""
    count = 0
    while (assignment := assignment_claim_next(worker=worker, batch=batch)) is not None:
        assignment_return(assignment=assignment)
        count += 1
    return count


@pytest.fixture
def five(cast: Cast) -> tuple[Batch, list[HIT]]:
    benchmark = make_benchmark("five", title="Five words")
    hits = make_hits(benchmark, 5)
    return hits[0].batch, hits


def test_a_project_names_its_batch_and_says_what_it_asks_pays_and_allows(
    cast: Cast, five: tuple[Batch, list[HIT]]
) -> None:
    batch, _ = five
    Batch.objects.filter(pk=batch.pk).update(reward=Decimal("0.25"), assignment_duration=timedelta(minutes=20))

    [project] = work_projects(worker=cast.alice.worker)

    assert project == Project(
        batch_id=batch.pk,
        title="Five words",
        summary="Judge about a dozen substitutes for a highlighted word in a short text.",
        benchmark_name="five",
        benchmark_title="Five words",
        reward=Decimal("0.25"),
        time_allowed=timedelta(minutes=20),
        hits_left=5,
        qualification=Qualification.NONE,
        assigned=False,
    )
    assert project.startable and project.minutes_allowed == 20


def test_a_batch_titled_by_its_researcher_keeps_its_title_and_a_free_one_shows_no_pay(cast: Cast) -> None:
    hits = make_hits(make_benchmark("plain"), 1, title="Words for the spring study", reward=Decimal("0"))

    [project] = work_projects(worker=cast.alice.worker)

    assert (project.batch_id, project.title, project.reward) == (hits[0].batch_id, "Words for the spring study", None)


def test_closed_and_crowd_batches_are_no_projects(cast: Cast, five: tuple[Batch, list[HIT]]) -> None:
    batch, _ = five
    crowd = make_hits(make_benchmark(), 2)[0].batch
    Batch.objects.filter(pk=crowd.pk).update(backend="mturk")
    assert left(cast.alice.worker) == {batch.pk: 5}

    Batch.objects.filter(pk=batch.pk).update(status=BatchStatus.CLOSED)

    assert work_projects(worker=cast.alice.worker) == []


def test_a_done_target_and_a_full_hit_are_not_left(cast: Cast, five: tuple[Batch, list[HIT]]) -> None:
    batch, hits = five
    type(hits[0].target).objects.filter(pk=hits[0].target_id).update(stage=TargetStage.DONE)
    HIT.objects.filter(pk=hits[1].pk).update(assignments_active=hits[1].assignments_required)

    assert left(cast.alice.worker) == {batch.pk: 3}
    assert claimable(cast.alice.worker, batch) == 3


def test_a_hit_reserved_for_others_is_not_left_and_one_reserved_for_you_is(
    cast: Cast, five: tuple[Batch, list[HIT]]
) -> None:
    batch, hits = five
    HIT.objects.filter(pk__in=[hits[0].pk, hits[1].pk]).update(reserved=True)
    HITReservation.objects.create(hit=hits[0], worker=cast.bob.worker)
    HITReservation.objects.create(hit=hits[1], worker=cast.alice.worker)

    [alices] = work_projects(worker=cast.alice.worker)
    [bobs] = work_projects(worker=cast.bob.worker)

    assert (alices.hits_left, alices.assigned) == (4, True)
    assert (bobs.hits_left, bobs.assigned) == (4, True)
    assert left(cast.carol.worker) == {batch.pk: 3}
    assert claimable(cast.carol.worker, batch) == 3


def test_a_hit_worked_on_is_not_left_whatever_became_of_the_work(cast: Cast, five: tuple[Batch, list[HIT]]) -> None:
    batch, _ = five
    worker = cast.alice.worker
    submitted = assignment_claim_next(worker=worker, batch=batch)
    assert submitted is not None
    assignment_submit(assignment=submitted, answers=honest_answers(submitted.hit))
    returned = assignment_claim_next(worker=worker, batch=batch)
    assert returned is not None
    assignment_return(assignment=returned)
    held = assignment_claim_next(worker=worker, batch=batch)
    assert held is not None

    assert left(worker) == {batch.pk: 2}
    assert left(cast.bob.worker) == {batch.pk: 5}


def test_a_hit_with_a_candidate_you_judged_or_hold_is_not_left_where_workers_must_differ(cast: Cast) -> None:
    benchmark = make_benchmark()
    batch = make_batch(benchmark)
    target = make_target(benchmark)
    first, second, third = ([candidate] for candidate in list(target.candidates.order_by("id"))[:3])
    judged, shares_judged, held, shares_held, free = (
        make_hit(batch, target, part=part, candidates=candidates)
        for part, candidates in enumerate([first, first, second, second, third])
    )
    worker = cast.alice.worker
    Label.objects.create(candidate=first[0], value="accept", step=2, worker=worker, origin="imported")
    claimed = Assignment.objects.create(
        hit=held,
        worker=worker,
        status=AssignmentStatus.CLAIMED,
        claimed_at=held.created_at,
        deadline=held.created_at + timedelta(days=1),
    )
    HIT.objects.filter(pk=held.pk).update(assignments_active=1)

    # Judged's and its twin go (a label), held goes (worked on) and takes its twin along.
    assert left(worker) == {batch.pk: 1}
    assignment_return(assignment=claimed)
    assert left(worker) == {batch.pk: 2}
    assert claimable(worker, batch) == 2 and {free.pk, shares_held.pk} == set(
        Assignment.objects.filter(worker=worker, status=AssignmentStatus.RETURNED).values_list("hit_id", flat=True)
    ) - {held.pk}

    Benchmark.objects.filter(pk=benchmark.pk).update(distinct_workers_per_candidate=False)
    assert left(cast.bob.worker) == {batch.pk: 5}
    assert left(worker) == {batch.pk: 2}, "judged and its twin come back; the three worked on stay out"
    assert claimable(worker, batch) == 2
    assert {judged.pk, shares_judged.pk} <= set(
        Assignment.objects.filter(worker=worker).values_list("hit_id", flat=True)
    )


def test_a_blocked_worker_has_no_project(cast: Cast, five: tuple[Batch, list[HIT]]) -> None:
    Worker.objects.filter(pk=cast.alice.worker.pk).update(blocked=True)

    assert work_projects(worker=cast.alice.worker) == []
    assert left(cast.bob.worker) == {five[0].pk: 5}


def test_a_project_says_where_you_stand_with_its_qualification_test(cast: Cast, five: tuple[Batch, list[HIT]]) -> None:
    batch, _ = five
    test = with_test(batch.benchmark)
    alice, bob, carol = cast.alice.worker, cast.bob.worker, cast.carol.worker
    take(test, alice)
    take(test, bob, wrong=6)

    standing = {worker.pk: work_projects(worker=worker)[0] for worker in (alice, bob, carol)}

    assert {pk: project.qualification for pk, project in standing.items()} == {
        alice.pk: Qualification.PASSED,
        bob.pk: Qualification.FAILED,
        carol.pk: Qualification.NEEDED,
    }
    assert [standing[worker.pk].startable for worker in (alice, bob, carol)] == [True, False, False]
    assert claimable(alice, batch) == 5
    assert claimable(bob, batch) == 0 and claimable(carol, batch) == 0


def test_the_count_matches_what_the_claim_hands_out_with_every_rule_at_once(cast: Cast) -> None:
    worker = cast.alice.worker
    batches = []
    for number in range(3):
        hits = make_hits(make_benchmark(f"mixed-{number}"), 4 + number)
        HIT.objects.filter(pk=hits[0].pk).update(reserved=True)
        HITReservation.objects.create(hit=hits[0], worker=cast.bob.worker)
        HIT.objects.filter(pk=hits[1].pk).update(assignments_active=3)
        candidate = hits[2].target.candidates.order_by("id").first()
        assert candidate is not None
        Label.objects.create(candidate=candidate, value="reject", step=2, worker=worker, origin="imported")
        batches.append(hits[0].batch)

    counted = left(worker)

    assert counted == {batch.pk: claimable(worker, batch) for batch in batches}
    assert list(counted.values()) == [1, 2, 3]


def test_the_list_costs_one_statement_however_many_batches_and_hits(cast: Cast) -> None:
    worker = cast.alice.worker
    make_hits(make_benchmark(), 2)
    with CaptureQueriesContext(connection) as one:
        assert len(work_projects(worker=worker)) == 1
    for number in range(5):
        benchmark = make_benchmark()
        if number == 2:
            with_test(benchmark)
        make_hits(benchmark, 3 + number)
    with CaptureQueriesContext(connection) as six:
        projects = work_projects(worker=worker)

    assert [project.hits_left for project in projects] == [2, 3, 4, 5, 6, 7]
    assert len(one) == len(six) == 1


# --- the claim that passes over a batch ------------------------------------------------------


@pytest.fixture(params=[True, False], ids=["one-statement", "in-steps"])
def claim_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    monkeypatch.setattr(queue, "CLAIM_IN_ONE_STATEMENT", request.param)
    return bool(request.param)


def test_a_claim_avoiding_a_batch_takes_any_other_first_older_or_newer(cast: Cast, claim_path: bool) -> None:
    older, middle, newer = (make_hits(make_benchmark(), 2)[0].batch for _ in range(3))
    worker = cast.alice.worker

    taken = []
    for avoid in (middle, older, newer):
        assignment = assignment_claim_next(worker=worker, avoid_batch=avoid)
        assert assignment is not None
        taken.append(assignment.hit.batch_id)
        assignment_return(assignment=assignment)

    assert taken == [older.pk, middle.pk, older.pk]


def test_a_claim_avoiding_a_batch_falls_back_to_it_when_nothing_else_is_left(cast: Cast, claim_path: bool) -> None:
    only = make_hits(make_benchmark(), 1)[0].batch
    elsewhere = make_hits(make_benchmark(), 1)[0].batch
    Batch.objects.filter(pk=elsewhere.pk).update(status=BatchStatus.CLOSED)

    assignment = assignment_claim_next(worker=cast.alice.worker, avoid_batch=only.pk)

    assert assignment is not None and assignment.hit.batch_id == only.pk
    assert HIT.objects.get(pk=assignment.hit_id).assignments_active == 1
    assert assignment_claim_next(worker=cast.bob.worker, avoid_batch=only, batch=elsewhere) is None
