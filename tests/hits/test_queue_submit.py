from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from annotation.models import Label, Worker
from crowdlex.celery import app as celery_app
from crowdlex.followup import REFRESH_TASK
from hits import selectors
from hits.models import HIT, Answer, Assignment, AssignmentStatus, HITItem
from hits.services import (
    AnswersInvalid,
    SubmissionRefused,
    assignment_claim_next,
    assignment_return,
    assignment_submit,
    assignment_submit_with_part,
    assignments_expire_overdue,
)
from schemes.swords.items import ItemKind
from tests.base import Cast
from tests.hits.factories import (
    answers_for,
    honest_answers,
    make_batch,
    make_benchmark,
    make_hit,
    make_hits,
    make_target,
)

pytestmark = pytest.mark.django_db


def claim(user: User, **kwargs: Any) -> Assignment:
    assignment = assignment_claim_next(worker=Worker.objects.get(user=user), **kwargs)
    assert assignment is not None
    return assignment


def test_it_stores_one_answer_per_item_and_one_label_per_candidate(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1, step=3, assignments_per_hit=7)
    assignment = claim(cast.alice)

    submitted = assignment_submit(assignment=assignment, answers=honest_answers(hit), seconds_on_page=12.5)

    assert submitted.status == AssignmentStatus.SUBMITTED
    assert submitted.submitted_at is not None
    assert Answer.objects.filter(assignment=assignment).count() == hit.items.count() == 6
    labels = Label.objects.filter(assignment=assignment)
    candidate_ids = set(hit.items.filter(kind=ItemKind.CANDIDATE).values_list("candidate_id", flat=True))
    assert {label.candidate_id for label in labels} == candidate_ids
    assert labels.count() == 4
    assert {(label.step, label.worker_id, label.value) for label in labels} == {(3, assignment.worker_id, "accept")}
    assert (submitted.controls_correct, submitted.controls_total) == (2, 2)
    hit.refresh_from_db()
    assert hit.assignments_active == 1


@pytest.mark.parametrize(
    ("target_copy", "distractor", "correct"),
    [("accept", "reject", 2), ("accept", "abstain", 2), ("reject", "reject", 1), ("accept", "accept", 1)],
)
def test_it_scores_the_two_controls(cast: Cast, target_copy: str, distractor: str, correct: int) -> None:
    [hit] = make_hits(make_benchmark(), 1)
    answers = answers_for(hit, "abstain")
    answers[HITItem.objects.get(hit=hit, kind=ItemKind.CONTROL_TARGET).pk] = target_copy
    answers[HITItem.objects.get(hit=hit, kind=ItemKind.CONTROL_DISTRACTOR).pk] = distractor

    submitted = assignment_submit(assignment=claim(cast.alice), answers=answers)

    assert (submitted.controls_correct, submitted.controls_total) == (correct, 2)


def test_it_rejects_a_second_submission_by_storing_nothing_more(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)
    first = assignment_submit(assignment=assignment, answers=honest_answers(hit), seconds_on_page=5)

    again = assignment_submit(assignment=assignment, answers=answers_for(hit, "reject"), seconds_on_page=50)

    assert again.pk == first.pk
    assert (again.submitted_at, again.seconds_on_page, again.status) == (
        first.submitted_at,
        first.seconds_on_page,
        first.status,
    )
    assert Answer.objects.filter(assignment=assignment).count() == hit.items.count()
    assert set(Label.objects.filter(assignment=assignment).values_list("value", flat=True)) == {"accept"}
    hit.refresh_from_db()
    assert hit.assignments_active == 1


def test_incomplete_answers_are_refused_naming_the_rows_and_nothing_is_stored(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)
    items = list(hit.items.order_by("position"))
    answers = answers_for(hit)
    del answers[items[2].pk], answers[items[4].pk]

    with pytest.raises(AnswersInvalid, match="rows 3, 5") as refused:
        assignment_submit(assignment=assignment, answers=answers)

    assert refused.value.missing == [items[2].pk, items[4].pk]
    assert not Answer.objects.exists() and not Label.objects.exists()
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.CLAIMED


def test_an_answer_that_is_not_accept_reject_or_abstain_is_refused(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1)
    answers: dict[Any, str] = answers_for(hit)
    first_item = hit.items.order_by("position").first()
    assert first_item is not None
    answers[first_item.pk] = "maybe"

    with pytest.raises(AnswersInvalid, match="accept, reject or abstain"):
        assignment_submit(assignment=claim(cast.alice), answers=answers)
    assert not Label.objects.exists()


def test_answers_for_items_of_another_hit_are_refused(cast: Cast) -> None:
    mine, other = make_hits(make_benchmark(), 2)
    assignment = claim(cast.alice)
    theirs = other if assignment.hit == mine else mine
    answers: dict[Any, str] = {**answers_for(assignment.hit), **answers_for(theirs)}

    with pytest.raises(AnswersInvalid, match="not part of this HIT"):
        assignment_submit(assignment=assignment, answers=answers)
    assert not Answer.objects.exists()


def test_answer_keys_may_be_digit_strings_as_in_forms_and_json(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1)
    answers = {str(pk): value for pk, value in honest_answers(hit).items()}

    submitted = assignment_submit(assignment=claim(cast.alice), answers=answers)  # type: ignore[arg-type]

    assert submitted.status == AssignmentStatus.SUBMITTED


def test_time_on_page_is_bounded_by_the_time_since_the_claim(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1, assignments_per_hit=3)
    start = timezone.now()
    alice = claim(cast.alice, now=start)
    bob = claim(cast.bob, now=start)
    carol = claim(cast.carol, now=start)
    later = start + timedelta(seconds=40)

    assert (
        assignment_submit(assignment=alice, answers=honest_answers(hit), seconds_on_page=1e9, now=later).seconds_on_page
        == 40
    )
    assert (
        assignment_submit(assignment=bob, answers=honest_answers(hit), seconds_on_page=-3, now=later).seconds_on_page
        == 0
    )
    assert assignment_submit(assignment=carol, answers=honest_answers(hit), now=later).seconds_on_page == 40


def test_an_overdue_claim_not_yet_expired_still_holds_its_slot(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1)
    start = timezone.now()
    assignment = claim(cast.alice, now=start)

    late = start + timedelta(hours=2)
    submitted = assignment_submit(assignment=assignment, answers=honest_answers(hit), now=late)

    assert submitted.status == AssignmentStatus.SUBMITTED
    hit.refresh_from_db()
    assert hit.assignments_active == 1


def test_a_submit_after_expiry_is_accepted_when_the_hit_still_has_room(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1, assignments_per_hit=2)
    start = timezone.now()
    assignment = claim(cast.alice, now=start)
    assert assignments_expire_overdue(now=start + timedelta(hours=1)) == 1
    hit.refresh_from_db()
    assert hit.assignments_active == 0

    submitted = assignment_submit(assignment=assignment, answers=honest_answers(hit), now=start + timedelta(hours=2))

    assert submitted.status == AssignmentStatus.SUBMITTED
    assert Label.objects.filter(assignment=assignment).count() == 4
    hit.refresh_from_db()
    assert hit.assignments_active == 1


def test_a_submit_after_expiry_is_refused_with_a_clear_message_when_the_hit_is_full(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1, assignments_per_hit=1)
    start = timezone.now()
    late = claim(cast.alice, now=start)
    assignments_expire_overdue(now=start + timedelta(hours=1))
    on_time = claim(cast.bob, now=start + timedelta(hours=1))
    assignment_submit(assignment=on_time, answers=honest_answers(hit), now=start + timedelta(hours=1))

    with pytest.raises(SubmissionRefused, match="ran out") as refused:
        assignment_submit(assignment=late, answers=honest_answers(hit), now=start + timedelta(hours=2))

    assert refused.value.code == "expired_and_full"
    late.refresh_from_db()
    assert late.status == AssignmentStatus.EXPIRED
    assert not Label.objects.filter(assignment=late).exists()
    hit.refresh_from_db()
    assert hit.assignments_active == 1


def test_a_returned_assignment_cannot_be_submitted(cast: Cast) -> None:
    [hit] = make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)
    assignment_return(assignment=assignment)

    with pytest.raises(SubmissionRefused, match="returned"):
        assignment_submit(assignment=assignment, answers=honest_answers(hit))
    assert not Label.objects.exists()


def test_it_asks_the_pipeline_to_refresh_the_touched_work_after_commit(
    cast: Cast, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    [hit] = make_hits(make_benchmark(), 1)
    queued: list[tuple[Any, ...]] = []
    monkeypatch.setattr(celery_app.tasks[REFRESH_TASK], "delay", lambda *args, **kwargs: queued.append((*args, kwargs)))

    with django_capture_on_commit_callbacks(execute=True):
        assignment_submit(assignment=claim(cast.alice), answers=honest_answers(hit))

    assert queued == [(hit.batch.benchmark_id, {"touched_only": True})]


def test_the_counter_matches_the_assignments_after_a_mixed_history(cast: Cast) -> None:
    hits = make_hits(make_benchmark(), 2, assignments_per_hit=3)
    start = timezone.now()
    for user in cast.annotators:
        assignment = claim(user, now=start)
        if user == cast.alice:
            assignment_return(assignment=assignment)
        elif user == cast.bob:
            assignment_submit(assignment=assignment, answers=honest_answers(assignment.hit), now=start)
    assignments_expire_overdue(now=start + timedelta(hours=1))

    for hit in HIT.objects.filter(pk__in=[h.pk for h in hits]):
        live = hit.assignments.filter(status=AssignmentStatus.SUBMITTED, filtered=False).count()
        assert hit.assignments_active == live


def test_the_submit_for_the_page_reads_the_part_its_saved_line_names(cast: Cast) -> None:
    """The page's submit reads the HIT's part and word with its lock: what ``hit_part`` reads, for
    a target split over two HITs of a batch (another target's HIT beside them) and one alone."""
    benchmark = make_benchmark()
    batch = make_batch(benchmark)
    target = make_target(benchmark, word="sat")
    candidates = list(target.candidates.order_by("id"))
    split = [make_hit(batch, target, part=part, candidates=candidates[part * 2 : part * 2 + 2]) for part in range(2)]
    [alone] = make_hits(benchmark, 1, batch=batch)
    worker = Worker.objects.get(user=cast.alice)
    parts = []
    for hit in [*split, alone]:
        now = timezone.now()
        assignment = Assignment.objects.create(
            hit=hit, worker=worker, claimed_at=now, deadline=now + timedelta(hours=1)
        )
        submitted, part = assignment_submit_with_part(assignment=assignment, worker=worker, answers=honest_answers(hit))
        assert submitted.status == AssignmentStatus.SUBMITTED
        assert part == selectors.hit_part(hit_id=hit.pk)
        parts.append((part.word, part.part, part.parts))
    assert parts[:2] == [("sat", 1, 2), ("sat", 2, 2)]
    assert parts[2][1:] == (1, 1)
    # Submitted again: the first answers stand, and the part is read all the same.
    _, again = assignment_submit_with_part(assignment=assignment, worker=worker, answers=honest_answers(alone))
    assert again == selectors.hit_part(hit_id=alone.pk)
