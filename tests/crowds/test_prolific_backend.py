"""The Prolific backend against a fake Prolific served over HTTP: publishing once, the study page
trusting nothing before a sync, returned and timed-out submissions, rejections with Prolific's
category and message, bonuses paid once, places added for re-collection, retries and refusals."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from annotation.models import Label
from crowds.interface import get_backend
from crowds.prolific import ProlificError
from crowds.selectors import batch_publish_plan, batch_spending
from crowds.services import (
    CrowdActionRefused,
    assignment_reject,
    batch_expire,
    batch_notify,
    batch_publish,
    batch_review_policy_update,
    batch_sync,
    bonus_send,
    worker_bonus,
)
from hits.models import HIT, Assignment, AssignmentStatus, Batch, BonusStatus, FilteredPolicy, HITItem
from schemes.swords.items import ItemKind
from tests.crowds.crowd_helpers import make_batch
from tests.crowds.prolific_fake import FakeProlific, fake_prolific

pytestmark = pytest.mark.django_db

SITE = "https://crowdlex.example.org"
LONG_MESSAGE = (
    "Thank you for taking part. We could not use this submission: the check questions of the task were "
    "answered in a way that shows the instructions were not followed."
)


@pytest.fixture
def fake(settings: Any) -> Any:
    settings.SITE_URL = SITE
    with fake_prolific(settings) as running:
        yield running


def _batch(**options: Any) -> Batch:
    options.setdefault("reward", "0.20")
    return make_batch(backend="prolific", **options)


def _published(fake: FakeProlific, **options: Any) -> Batch:
    batch = _batch(**options)
    batch_publish(batch=batch, options={"estimated_minutes": 1})
    batch.refresh_from_db()
    return batch


def _answers(hit: HIT, value: str = "accept") -> dict[str, str]:
    return {
        f"item-{item.pk}": "reject" if item.kind == ItemKind.CONTROL_DISTRACTOR else value
        for item in HITItem.objects.filter(hit=hit)
    }


def _open(client: Client, path: str) -> tuple[Assignment, str]:
    page = client.get(path)
    assert page.status_code == 200, page.content
    token = page.content.decode().split('name="token" value="', 1)[1].split('"', 1)[0]
    session = path.split("SESSION_ID=", 1)[1]
    return Assignment.objects.get(external_id=session), token


def _submit(client: Client, batch: Batch, token: str, assignment: Assignment, value: str = "accept") -> Any:
    return client.post(f"/prolific/study/{batch.public_token}/", {"token": token, **_answers(assignment.hit, value)})


def _take_and_finish(fake: FakeProlific, batch: Batch, participant: str, value: str = "accept") -> Assignment:
    session, path = fake.take_place(batch.external["study_id"], participant)
    client = Client()
    assignment, token = _open(client, path)
    assert _submit(client, batch, token, assignment, value).status_code == 302
    fake.complete(session, batch.external["completion_code"])
    return assignment


def test_the_dry_run_shows_the_study_its_cost_with_the_service_fee_and_the_pay_rate(settings: Any) -> None:
    settings.SITE_URL = SITE
    batch = _batch(hits=2, assignments=3)
    batch.external = {"estimated_minutes": 1}
    batch.save()

    plan = batch_publish_plan(batch=batch)
    text = "\n".join(plan.lines())

    assert plan.study["total_available_places"] == 6
    assert plan.study["reward"] == 20
    assert "Cost: rewards $1.20 + fee $0.54 = $1.74" in text
    assert "$12.00/h at 60 s per HIT, at least Prolific's minimum of $8.00/h (service fee 42.8 %)" in text
    assert plan.warnings == []


def test_the_plan_warns_and_publishing_refuses_pay_under_prolifics_minimum(fake: FakeProlific) -> None:
    batch = _batch(reward="0.10")

    plan = batch_publish_plan(batch=batch)
    assert any("under Prolific's minimum of $8.00/h" in warning for warning in plan.warnings)
    with pytest.raises(ProlificError, match="under Prolific's minimum"):
        batch_publish(batch=batch, options={"estimated_minutes": 1})
    assert fake.studies == {}


def test_publishing_again_makes_no_second_study_even_after_losing_its_id(fake: FakeProlific) -> None:
    batch = _published(fake)
    study_id = batch.external["study_id"]

    again = batch_publish(batch=batch)
    # A publish that died after Prolific made the study: the study is found by its internal name.
    Batch.objects.filter(pk=batch.pk).update(external={**batch.external, "study_id": ""})
    batch.refresh_from_db()
    third = batch_publish(batch=batch)

    assert (again.hits_created, again.hits_existing) == (0, 2)
    assert third.messages == [f"{batch}'s study was already on Prolific as {study_id}"]
    assert list(fake.studies) == [study_id]
    assert fake.studies[study_id]["total_available_places"] == 6


def test_a_forged_session_saves_work_that_never_counts(fake: FakeProlific) -> None:
    batch = _published(fake)
    client = Client()
    study = batch.external["study_id"]
    path = f"/prolific/study/{batch.public_token}/?PROLIFIC_PID={'f' * 24}&STUDY_ID={study}&SESSION_ID={'e' * 24}"
    assignment, token = _open(client, path)
    assert _submit(client, batch, token, assignment).status_code == 302
    Assignment.objects.filter(pk=assignment.pk).update(submitted_at=timezone.now() - timedelta(hours=1))

    report = batch_sync(batch=batch, hold=timedelta(0))

    assignment.refresh_from_db()
    assert report.flagged_unknown == [assignment.pk]
    assert (assignment.external_unknown, assignment.filtered, assignment.status) == (True, True, "rejected")
    assert not Label.objects.exists()
    assert not any(path.endswith("/transition/") for _, path in fake.calls if "submissions" in path)


def test_a_link_of_another_study_is_refused(fake: FakeProlific) -> None:
    batch = _published(fake)

    query = f"PROLIFIC_PID={'a' * 24}&STUDY_ID={'b' * 24}&SESSION_ID={'c' * 24}"
    page = Client().get(f"/prolific/study/{batch.public_token}/?{query}")

    assert page.status_code == 400
    assert not Assignment.objects.exists()


def test_participants_are_spread_over_the_hits_that_need_work(fake: FakeProlific) -> None:
    batch = _published(fake, hits=2, assignments=1)

    first, _ = _open(Client(), fake.take_place(batch.external["study_id"], "1" * 24)[1])
    second, _ = _open(Client(), fake.take_place(batch.external["study_id"], "2" * 24)[1])

    assert first.hit_id != second.hit_id


def test_a_returned_submission_ends_its_claim_and_its_hit_goes_to_the_next_participant(fake: FakeProlific) -> None:
    batch = _published(fake, hits=1, assignments=1)
    session, path = fake.take_place(batch.external["study_id"], "1" * 24)
    claimed, _ = _open(Client(), path)
    fake.give_back(session)

    report = batch_sync(batch=batch, hold=timedelta(0))

    claimed.refresh_from_db()
    assert (report.updated, claimed.status, claimed.external_status) == (1, "returned", "Returned")
    # Prolific gave the place back by itself, and the next participant gets the same HIT.
    after = _take_and_finish(fake, batch, "2" * 24)
    assert after.hit_id == claimed.hit_id


def test_work_saved_here_whose_submission_timed_out_on_prolific_never_counts(fake: FakeProlific) -> None:
    batch = _published(fake, hits=1, assignments=1)
    session, path = fake.take_place(batch.external["study_id"], "1" * 24)
    client = Client()
    assignment, token = _open(client, path)
    _submit(client, batch, token, assignment)
    fake.time_out(session)

    batch_sync(batch=batch, hold=timedelta(0))

    assignment.refresh_from_db()
    assert (assignment.status, assignment.filtered, assignment.external_status) == ("expired", True, "TimedOut")
    assert not Label.objects.exists()
    assert HIT.objects.get(pk=assignment.hit_id).assignments_active == 0


def test_a_rejection_carries_the_batchs_category_and_a_long_enough_message(fake: FakeProlific) -> None:
    batch = _published(fake, hits=1, assignments=1)
    assignment = _take_and_finish(fake, batch, "1" * 24)
    batch_sync(batch=batch, review=False)

    with pytest.raises(ProlificError, match="at least 100 characters"):
        assignment_reject(assignment=assignment, message="Too short.")
    assignment_reject(assignment=assignment, message=LONG_MESSAGE)

    submission = fake.submissions[assignment.external_id]
    assert submission["status"] == "REJECTED"
    assert submission["rejection"] == {"message": LONG_MESSAGE, "category": "FAILED_CHECK"}
    with pytest.raises(CrowdActionRefused, match="at least 100 characters"):
        batch_review_policy_update(batch=batch, filtered_policy=FilteredPolicy.REJECT, rejection_message="No.")


def test_a_bonus_is_paid_once_per_reason(fake: FakeProlific) -> None:
    batch = _published(fake, hits=1, assignments=1)
    assignment = _take_and_finish(fake, batch, "1" * 24)
    batch_sync(batch=batch, review=False)

    first = worker_bonus(assignment=assignment, amount="0.50", reason="Careful work")
    again = worker_bonus(assignment=assignment, amount="0.50", reason="Careful work")

    assert (first.pk, first.status, again.status) == (again.pk, BonusStatus.SENT, BonusStatus.SENT)
    assert fake.submissions[assignment.external_id]["bonus_payments"] == [50]
    assert fake.pay_calls(first.external_id) == 1
    # Paid: 0.20 reward is not approved yet; the bonus and its 42.8 % fee are.
    spending = batch_spending(batch=batch)
    assert (spending.bonuses_paid, spending.fees_paid) == (Decimal("0.50"), Decimal("0.21"))


def test_a_bonus_whose_payment_went_unanswered_is_never_asked_for_twice(fake: FakeProlific) -> None:
    batch = _published(fake, hits=1, assignments=1)
    assignment = _take_and_finish(fake, batch, "1" * 24)
    batch_sync(batch=batch, review=False)
    real_pay = fake._pay_bonus

    def pay_then_fail(**kwargs: Any) -> tuple[int, Any]:
        # Prolific took the payment, but the answer never made it back.
        real_pay(**kwargs)
        return 502, {"error": {"detail": "bad gateway"}}

    fake._pay_bonus = pay_then_fail  # type: ignore[method-assign]
    bonus = worker_bonus(assignment=assignment, amount="0.50", reason="Careful work")
    assert bonus.status == BonusStatus.PENDING
    sent = bonus_send(bonus=bonus)

    assert sent.status == BonusStatus.SENT
    assert fake.pay_calls(bonus.external_id) == 1
    assert fake.submissions[assignment.external_id]["bonus_payments"] == [50]


def test_participants_are_messaged_through_prolific_about_their_study(fake: FakeProlific) -> None:
    batch = _published(fake, hits=1, assignments=1)
    assignment = _take_and_finish(fake, batch, "1" * 24)
    # Until a sync finds the submission on Prolific, the ids are only the page's word: nobody is written to.
    unconfirmed = batch_notify(batch=batch, subject="Step 3", text="The next study is up.")
    assert (unconfirmed.notified, fake.messages) == (0, [])
    batch_sync(batch=batch, review=False)

    result = batch_notify(batch=batch, subject="Step 3", text="The next study is up.")

    assert (result.notified, result.failures) == (1, {})
    assert fake.messages == [
        {
            "recipient_id": assignment.worker.external_id,
            "study_id": batch.external["study_id"],
            "body": "Step 3\n\nThe next study is up.",
        }
    ]


def test_filtered_work_that_was_paid_anyway_is_re_collected_by_adding_places_once(fake: FakeProlific) -> None:
    batch = _published(fake, hits=1, assignments=2)
    study = fake.studies[batch.external["study_id"]]
    for participant in ("1" * 24, "2" * 24):
        _take_and_finish(fake, batch, participant)
    batch_sync(batch=batch, review=False)
    spammer = Assignment.objects.filter(hit__batch=batch).first()
    assert spammer is not None
    Assignment.objects.filter(pk=spammer.pk).update(filtered=True)
    HIT.objects.filter(pk=spammer.hit_id).update(assignments_active=1)

    report = batch_sync(batch=batch, hold=timedelta(0))
    again = batch_sync(batch=batch, hold=timedelta(0))

    assert (report.approved, report.recollected) == (2, 1)
    assert again.recollected == 0
    assert study["total_available_places"] == 3
    assert batch_spending(batch=Batch.objects.get(pk=batch.pk)).recollection == Decimal("0.29")


def test_expiring_stops_the_study(fake: FakeProlific) -> None:
    batch = _published(fake)

    batch_expire(batch=batch)

    assert fake.studies[batch.external["study_id"]]["status"] == "COMPLETED"
    assert Batch.objects.get(pk=batch.pk).status == "closed"


def test_a_busy_prolific_is_asked_again_and_a_bad_token_is_named(fake: FakeProlific, settings: Any) -> None:
    batch = _published(fake)
    fake.failures = [503]

    study = get_backend("prolific").study(batch)  # type: ignore[attr-defined]

    assert study["id"] == batch.external["study_id"]
    assert fake.calls[-2:] == [("GET", f"/api/v1/studies/{study['id']}/")] * 2
    settings.PROLIFIC_API_TOKEN = "wrong"
    with pytest.raises(ProlificError, match="refused the API token"):
        get_backend("prolific").study(batch)  # type: ignore[attr-defined]


def test_the_study_page_sends_a_participant_who_already_submitted_back_to_prolific(fake: FakeProlific) -> None:
    batch = _published(fake, hits=1, assignments=1)
    _, path = fake.take_place(batch.external["study_id"], "1" * 24)
    client = Client()
    assignment, token = _open(client, path)
    _submit(client, batch, token, assignment)

    reload = client.get(path)

    assert reload.status_code == 302
    assert reload["Location"].endswith(f"?cc={batch.external['completion_code']}")
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.SUBMITTED
