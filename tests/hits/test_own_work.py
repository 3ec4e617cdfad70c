"""The worker's own page (docs/annotator.md, "Your HITs and earnings"): statuses in words, the reason
of a rejection, earnings and bonuses on each backend as recorded here or by the crowd, and accuracy on
check items only where the batch allows it."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.template import Context, Template
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from crowds.services import assignment_approve, assignment_reject, batch_sync, worker_bonus
from hits.models import Assignment, AssignmentStatus, Batch, BonusStatus
from hits.selectors.own_work import NOT_COUNTED, own_assignments, own_work_rows, own_work_summary
from hits.services import assignment_return, assignment_submit, batch_clone, batch_close
from tests.base import Cast
from tests.crowds.crowd_helpers import make_batch as make_crowd_batch
from tests.crowds.crowd_helpers import mturk_worker, publish_locally, stubbed_mturk, submitted_assignment
from tests.crowds.prolific_fake import FakeProlific
from tests.crowds.test_prolific_backend import LONG_MESSAGE, _published, _take_and_finish
from tests.crowds.test_prolific_backend import fake as fake
from tests.hits.factories import answers_for, claim, honest_answers, make_batch, make_benchmark, make_hits
from tests.hits.generation_data import build_benchmark

pytestmark = pytest.mark.django_db


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def row_of(html: str, assignment_id: int) -> str:
    start = html.index(f'data-assignment="{assignment_id}"')
    return html[start : html.index("</tr>", start)]


def local_work(cast: Cast, *, gold_feedback: bool) -> dict[str, Assignment]:
    """Alice's work on a local batch: approved with a bonus, rejected with a message, filtered for
    failed checks, returned, and one in progress; Bob has work of his own."""
    benchmark = make_benchmark(name="local-bench")
    batch = make_batch(benchmark, assignments_per_hit=1, reward=Decimal("0.30"), gold_feedback=gold_feedback)
    hits = make_hits(benchmark, 6, batch=batch)
    work: dict[str, Assignment] = {}
    for name in ("approved", "rejected", "sloppy"):
        assignment = claim(cast.alice)
        answers = honest_answers(assignment.hit) if name != "sloppy" else answers_for(assignment.hit, "accept")
        work[name] = assignment_submit(assignment=assignment, answers=answers, seconds_on_page=30.0)
    assignment_approve(assignment=work["approved"])
    worker_bonus(assignment=work["approved"], amount="0.05", reason="Thorough answers")
    assignment_reject(assignment=work["rejected"], message="Several rows were answered at random.")
    Assignment.objects.filter(pk=work["sloppy"].pk).update(filtered=True)
    work["returned"] = assignment_return(assignment=claim(cast.alice))
    work["live"] = claim(cast.alice)
    bob = claim(cast.bob)
    assignment_submit(assignment=bob, answers=honest_answers(bob.hit))
    assert len(hits) == 6
    return work


def test_the_page_shows_each_status_its_reason_and_the_rewards_recorded(cast: Cast) -> None:
    work = local_work(cast, gold_feedback=False)

    response = signed_in(cast.alice).get("/work/mine/")

    assert response.status_code == 200
    html = response.content.decode()
    assert html.count("data-assignment=") == 5  # never Bob's
    assert "approved" in row_of(html, work["approved"].pk)
    assert "$0.30" in row_of(html, work["approved"].pk)
    assert "$0.05" in row_of(html, work["approved"].pk) and "Thorough answers" in row_of(html, work["approved"].pk)
    rejected = row_of(html, work["rejected"].pk)
    assert "rejected" in rejected and "Several rows were answered at random." in rejected
    assert "$0.30" not in rejected
    sloppy = row_of(html, work["sloppy"].pk)
    assert NOT_COUNTED in sloppy and "$0.30" not in sloppy
    assert "returned" in row_of(html, work["returned"].pk)
    assert "in progress" in row_of(html, work["live"].pk) and "continue" in row_of(html, work["live"].pk)
    # Earned locally: the approved HIT's reward and its bonus (the lab pays them).
    summary = own_work_summary(worker=cast.alice.worker)
    [local] = summary.earnings
    assert (local.earned, local.pending, local.bonuses) == (Decimal("0.30"), Decimal("0.00"), Decimal("0.05"))
    assert 'class="num earned">$0.30' in html
    # The lab pays local work: no crowd's record to explain.
    assert summary.paying_crowds == [] and 'id="earned-meaning"' not in html


def test_accuracy_on_check_items_is_shown_only_where_the_batch_allows_it(cast: Cast) -> None:
    work = local_work(cast, gold_feedback=False)
    hidden = signed_in(cast.alice).get("/work/mine/").content.decode()
    assert "Check questions" not in hidden and "accuracy on check questions" not in hidden

    Batch.objects.update(gold_feedback=True)
    shown = signed_in(cast.alice).get("/work/mine/").content.decode()

    approved = Assignment.objects.get(pk=work["approved"].pk)
    sloppy = Assignment.objects.get(pk=work["sloppy"].pk)
    assert approved.controls_total == 2 and sloppy.controls_correct == 1
    assert f"{approved.controls_correct} of {approved.controls_total}" in row_of(shown, approved.pk)
    assert "1 of 2" in row_of(shown, sloppy.pk)
    # Three submitted HITs with two checks each: one check missed in all.
    assert "5 of 6 right (83 %)" in shown


def test_the_page_is_paginated(cast: Cast, settings: Any) -> None:
    settings.WORK_HISTORY_PAGE_SIZE = 2
    local_work(cast, gold_feedback=False)
    client = signed_in(cast.alice)

    pages = [client.get(f"/work/mine/?page={number}").content.decode() for number in (1, 2, 3)]

    assert [page.count("data-assignment=") for page in pages] == [2, 2, 1]
    assert "page 1 of 3" in pages[0]


def test_a_researcher_or_someone_signed_out_sees_no_one_elses_work(cast: Cast) -> None:
    local_work(cast, gold_feedback=False)

    assert Client().get("/work/mine/").status_code == 302
    bob_page = signed_in(cast.bob).get("/work/mine/").content.decode()
    assert bob_page.count("data-assignment=") == 1


def test_mturk_work_shows_what_mturk_recorded(monkeypatch: Any) -> None:
    batch = make_crowd_batch(hits=2, reward="0.25", gold_feedback=True)
    publish_locally(batch)
    first, second = batch.hits.order_by("id")
    worker = mturk_worker("WORKER1")
    approved = submitted_assignment(first, worker, external_id="A1", external_status="Submitted")
    rejected = submitted_assignment(second, worker, external_id="A2", external_status="Submitted")
    waiting = submitted_assignment(second, mturk_worker("WORKER1-elsewhere"), external_id="A3")
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("approve_assignment", {}, {"AssignmentId": "A1", "OverrideRejection": False})
        stub.add_response("reject_assignment", {}, {"AssignmentId": "A2", "RequesterFeedback": "Checks failed."})
        stub.add_response("list_bonus_payments", {"BonusPayments": []}, {"AssignmentId": "A1", "MaxResults": 100})
        stub.add_response("send_bonus", {}, None)
        assignment_approve(assignment=approved)
        assignment_reject(assignment=rejected, message="Checks failed.")
        worker_bonus(assignment=approved, amount="0.10", reason="Careful work")

    rows = {row.assignment_id: row for row in own_work_rows(own_assignments(worker=worker))}
    summary = own_work_summary(worker=worker)

    assert set(rows) == {approved.pk, rejected.pk}
    assert (rows[approved.pk].status_words, rows[approved.pk].reward, rows[approved.pk].reward_paid) == (
        "approved",
        Decimal("0.25"),
        True,
    )
    assert [(bonus.amount, bonus.paid) for bonus in rows[approved.pk].bonuses] == [(Decimal("0.10"), True)]
    assert (rows[rejected.pk].status_words, rows[rejected.pk].reason, rows[rejected.pk].reward) == (
        "rejected",
        "Checks failed.",
        None,
    )
    [line] = summary.earnings
    assert (line.label, line.earned, line.pending, line.bonuses) == (
        "Amazon Mechanical Turk",
        Decimal("0.25"),
        Decimal("0.00"),
        Decimal("0.10"),
    )
    assert summary.paying_crowds == ["Amazon Mechanical Turk"]
    # Work the crowd has not confirmed yet awaits review for the worker who did it.
    [other] = own_work_summary(worker=waiting.worker).earnings
    assert other.pending == Decimal("0.25") and other.earned == Decimal("0.00")


def test_prolific_work_shows_what_prolific_recorded(fake: FakeProlific) -> None:
    batch = _published(fake, hits=2, assignments=1)
    good = _take_and_finish(fake, batch, "1" * 24)
    bad = _take_and_finish(fake, batch, "2" * 24)
    batch_sync(batch=batch, review=False)
    good = Assignment.objects.get(pk=good.pk)
    pending_rows = own_work_rows(own_assignments(worker=good.worker))
    assert [(row.status_words, row.reward, row.reward_paid) for row in pending_rows] == [
        ("submitted, awaiting review", Decimal("0.20"), False)
    ]

    assignment_approve(assignment=good)
    bonus = worker_bonus(assignment=good, amount="0.50", reason="Careful work")
    assignment_reject(assignment=Assignment.objects.get(pk=bad.pk), message=LONG_MESSAGE)

    assert bonus.status == BonusStatus.SENT
    [good_row] = own_work_rows(own_assignments(worker=good.worker))
    assert (good_row.status_words, good_row.reward, good_row.reward_paid) == ("approved", Decimal("0.20"), True)
    [line] = own_work_summary(worker=good.worker).earnings
    assert (line.label, line.earned, line.bonuses) == ("Prolific", Decimal("0.20"), Decimal("0.50"))
    assert own_work_summary(worker=good.worker).paying_crowds == ["Prolific"]
    [bad_row] = own_work_rows(own_assignments(worker=bad.worker))
    assert (bad_row.status, bad_row.reason) == (AssignmentStatus.REJECTED, LONG_MESSAGE)


def test_the_page_names_the_crowds_that_pay_in_words() -> None:
    page = Template("{% load hits_tags %}<p>On {{ crowds|in_words }}.</p>")
    assert page.render(Context({"crowds": ["A"]})) == "<p>On A.</p>"
    assert page.render(Context({"crowds": ["A", "B"]})) == "<p>On A and B.</p>"
    assert page.render(Context({"crowds": ["A", "B", "C"]})) == "<p>On A, B and C.</p>"
    assert page.render(Context({"crowds": []})) == "<p>On .</p>"


def test_a_researcher_allows_gold_feedback_when_creating_a_batch_and_a_clone_keeps_it(cast: Cast) -> None:
    build_benchmark("feedback")
    build_benchmark("plain")
    client = APIClient()
    client.force_authenticate(cast.researcher)

    response = client.post(
        reverse("api-batch-list"), {"benchmark": "feedback", "step": 2, "seed": 1, "gold_feedback": True}, format="json"
    )
    unset = client.post(reverse("api-batch-list"), {"benchmark": "plain", "step": 2, "seed": 2}, format="json")

    assert response.status_code == 201, response.content
    assert response.json()["gold_feedback"] is True
    assert unset.json()["gold_feedback"] is False
    batch = Batch.objects.get(pk=response.json()["id"])
    batch_close(batch=batch)
    assert batch_clone(batch=batch).gold_feedback
