"""The qualification test gates the local queue: a person who has not passed a benchmark's test is
never offered its HITs, through the queue page, the services or the REST work API."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from annotation.models import Label, Worker
from hits.models import Assignment, QualificationAttempt
from hits.qualification import qualification_attempt_start, qualification_set_active
from hits.services import HitsGenerationError, assignment_claim_next, assignment_submit, hits_generate
from tests.base import Cast, logged_in
from tests.hits.factories import honest_answers, make_benchmark, make_hits, make_target
from tests.hits.qualification_data import expected_answers, take, with_test

pytestmark = pytest.mark.django_db


def worker(user: User) -> Worker:
    return Worker.objects.get(user=user)


def test_nobody_gets_a_hit_of_a_benchmark_with_a_test_before_taking_it(cast: Cast) -> None:
    benchmark = make_benchmark()
    make_hits(benchmark, 2)
    with_test(benchmark)

    assert assignment_claim_next(worker=worker(cast.alice)) is None
    assert assignment_claim_next(worker=worker(cast.alice), benchmark=benchmark) is None


def test_a_person_who_passed_gets_hits_and_one_who_failed_never_does(cast: Cast) -> None:
    benchmark = make_benchmark()
    make_hits(benchmark, 3)
    test = with_test(benchmark, length=6, pass_mark=0.8)

    passed = take(test, worker(cast.alice), wrong=1)  # 5 of 6: 0.83
    failed = take(test, worker(cast.bob), wrong=2)  # 4 of 6: 0.67

    assert (passed.correct, passed.total, passed.passed) == (5, 6, True)
    assert (failed.correct, failed.total, failed.passed) == (4, 6, False)
    assert assignment_claim_next(worker=worker(cast.alice)) is not None
    assert assignment_claim_next(worker=worker(cast.bob)) is None
    assert assignment_claim_next(worker=worker(cast.bob), benchmark=benchmark) is None


def test_the_gate_holds_only_for_the_benchmark_of_the_test(cast: Cast) -> None:
    gated, open_ = make_benchmark(), make_benchmark()
    make_hits(gated, 1)
    [open_hit] = make_hits(open_, 1)
    take(with_test(gated), worker(cast.bob), wrong=6)

    assignment = assignment_claim_next(worker=worker(cast.bob))

    assert assignment is not None and assignment.hit == open_hit


def test_a_test_switched_off_gates_nobody_and_keeps_its_results(cast: Cast) -> None:
    benchmark = make_benchmark()
    make_hits(benchmark, 1)
    test = with_test(benchmark)
    take(test, worker(cast.bob), wrong=6)

    qualification_set_active(test=test, active=False)

    assert assignment_claim_next(worker=worker(cast.bob)) is not None
    assert QualificationAttempt.objects.get(worker=worker(cast.bob)).passed is False


def test_an_attempt_is_taken_once_and_a_second_submit_changes_nothing(cast: Cast) -> None:
    benchmark = make_benchmark()
    test = with_test(benchmark)
    first = take(test, worker(cast.bob), wrong=6)

    again = qualification_attempt_start(test=test, worker=worker(cast.bob))
    from hits.qualification import qualification_attempt_submit

    resubmitted = qualification_attempt_submit(attempt=again, answers=expected_answers(again))

    assert again.pk == first.pk
    assert resubmitted.passed is False and resubmitted.correct == first.correct
    assert QualificationAttempt.objects.filter(worker=worker(cast.bob)).count() == 1


def test_test_answers_are_never_labels_of_the_benchmark(cast: Cast) -> None:
    benchmark = make_benchmark()
    [hit] = make_hits(benchmark, 1)
    test = with_test(benchmark)

    take(test, worker(cast.alice))
    assert Label.objects.count() == 0

    assignment = assignment_claim_next(worker=worker(cast.alice))
    assert assignment is not None
    assignment_submit(assignment=assignment, answers=honest_answers(hit))
    assert Label.objects.count() == hit.items.filter(candidate__isnull=False).count()
    assert set(Label.objects.values_list("assignment", flat=True)) == {assignment.pk}


def test_the_queue_page_sends_a_new_annotator_to_the_test_and_a_failed_one_away(cast: Cast) -> None:
    benchmark = make_benchmark(title="Bright words")
    make_hits(benchmark, 2)
    test = with_test(benchmark)
    alice, bob = logged_in(cast.alice), logged_in(cast.bob)

    home = alice.get("/work/").content.decode()
    assert f'start with a short <a href="/work/qualification/{benchmark.name}/">qualification test</a>' in home
    response = alice.post("/work/next")
    assert response.status_code == 302
    assert response.headers["Location"] == f"/work/qualification/{benchmark.name}/"

    take(test, worker(cast.bob), wrong=6)
    response = bob.post("/work/next", follow=True)
    assert response.redirect_chain[-1][0] == "/work/next"
    assert "You did not pass the qualification test of “Bright words”" in response.content.decode()
    assert not Assignment.objects.filter(worker__user=cast.bob).exists()


def test_the_work_api_refuses_a_failed_annotator_with_a_clear_message(cast: Cast) -> None:
    benchmark = make_benchmark()
    [hit] = make_hits(benchmark, 1)
    test = with_test(benchmark)
    take(test, worker(cast.bob), wrong=6)
    bob, carol = APIClient(), APIClient()
    bob.force_authenticate(cast.bob)
    carol.force_authenticate(cast.carol)

    scoped = bob.post("/api/work/claim", {"benchmark": benchmark.name}, format="json")
    by_batch = bob.post("/api/work/claim", {"batch": hit.batch_id}, format="json")
    pending = carol.post("/api/work/claim", {}, format="json")

    assert scoped.status_code == 403
    assert scoped.json()["detail"] == (
        f"You did not pass the qualification test of {benchmark.name}, so its HITs are not offered to you."
    )
    assert by_batch.status_code == 403
    assert pending.status_code == 409
    assert pending.json()["qualification"] == f"/api/work/qualification/{benchmark.name}"
    assert "Take the qualification test" in pending.json()["detail"]
    assert not Assignment.objects.exists()


def test_work_is_not_assigned_to_a_named_annotator_who_failed_the_test(cast: Cast) -> None:
    benchmark = make_benchmark(scheme="prolex")
    for word in ("calm", "bright"):
        make_target(benchmark, word=word, pos="", candidates=["still", "serene"])
    test = with_test(benchmark)
    take(test, worker(cast.bob), wrong=6)
    take(test, worker(cast.alice))

    with pytest.raises(HitsGenerationError, match="bob did not pass the qualification test"):
        hits_generate(benchmark=benchmark, step=1, seed=1, annotators=[worker(cast.alice), worker(cast.bob)])
    batch = hits_generate(benchmark=benchmark, step=1, seed=1, annotators=[worker(cast.alice), worker(cast.carol)])

    # Carol has not taken the test yet: her share waits for her to pass it.
    assert assignment_claim_next(worker=worker(cast.carol)) is None
    assert assignment_claim_next(worker=worker(cast.alice)) is not None
    assert batch.hits.count() == 2
