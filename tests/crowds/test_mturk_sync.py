"""Sync: reconcile with MTurk's list (paginated), review by policy, flag unknown work, re-collect."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.db import IntegrityError, connections, transaction
from django.utils import timezone

from annotation.models import Target, TargetStage
from crowds.mturk import EXPIRE_NOW, hit_token, request_token
from crowds.selectors import batch_recollection_due, batch_spending, benchmark_recollection_left
from crowds.services import (
    CrowdActionRefused,
    assignment_accept_remote,
    assignment_approve,
    batch_expire,
    batch_publish,
    batch_sync,
    worker_bonus,
)
from crowds.services.publishing import BATCH_LOCK_SPACE
from crowds.services.sync import NO_WORK_MESSAGE
from hits.models import HIT, Assignment, AssignmentStatus, Batch, Bonus, CrowdLimits, FilteredPolicy, RemoteHIT
from tests.crowds.crowd_helpers import (
    SITE,
    make_batch,
    mturk_worker,
    publish_locally,
    remote_assignment,
    stubbed_mturk,
    submitted_assignment,
)

pytestmark = pytest.mark.django_db

STATUSES = ["Submitted", "Approved", "Rejected"]


@pytest.fixture(autouse=True)
def _public_site(settings: Any) -> None:
    settings.SITE_URL = SITE
    settings.MTURK_RECONCILE_GRACE_SECONDS = 900


def _list(hit_id: str, token: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"HITId": hit_id, "MaxResults": 100, "AssignmentStatuses": STATUSES}
    if token:
        params["NextToken"] = token
    return params


def _get_hit(hit_id: str, *, available: int, status: str = "Assignable", max_assignments: int = 3) -> dict[str, Any]:
    return {
        "HIT": {
            "HITId": hit_id,
            "HITStatus": status,
            "MaxAssignments": max_assignments,
            "NumberOfAssignmentsAvailable": available,
            "Expiration": timezone.now() + timedelta(days=3),
        }
    }


def _extend(stub: Any, posting: RemoteHIT, count: int) -> None:
    """MTurk is asked to add ``count`` assignments to the posting (its first extension)."""
    stub.add_response(
        "create_additional_assignments_for_hit",
        {},
        {
            "HITId": posting.external_id,
            "NumberOfAdditionalAssignments": count,
            "UniqueRequestToken": request_token("extend", posting.external_id, 1),
        },
    )


def test_sync_reads_every_page_reconciles_states_approves_and_flags_what_mturk_does_not_know(
    monkeypatch: Any,
) -> None:
    batch = make_batch(hits=2)
    first, second = publish_locally(batch)
    hit1, hit2 = first.hit, second.hit
    good = submitted_assignment(hit1, mturk_worker("W1"), external_id="A1")
    spam = submitted_assignment(hit1, mturk_worker("W2"), external_id="A2", filtered=True)
    forged = submitted_assignment(hit1, mturk_worker("W3"), external_id="A3")
    auto = submitted_assignment(hit2, mturk_worker("W4"), external_id="A4")
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response(
            "list_assignments_for_hit",
            {"Assignments": [remote_assignment("A1", "W1", first.external_id)], "NextToken": "n2"},
            _list(first.external_id),
        )
        stub.add_response(
            "list_assignments_for_hit",
            {"Assignments": [remote_assignment("A2", "W2", first.external_id)]},
            _list(first.external_id, "n2"),
        )
        stub.add_response(
            "list_assignments_for_hit",
            {"Assignments": [remote_assignment("A4", "W4", second.external_id, "Approved")]},
            _list(second.external_id),
        )
        stub.add_response("approve_assignment", {}, {"AssignmentId": "A1", "OverrideRejection": False})
        # Filtered work under the default policy is approved too.
        stub.add_response("approve_assignment", {}, {"AssignmentId": "A2", "OverrideRejection": False})
        # HIT 1 lost two of three: MTurk still offers the slot the forged one never used; one more is added.
        stub.add_response("get_hit", _get_hit(first.external_id, available=1), {"HITId": first.external_id})
        stub.add_response(
            "create_additional_assignments_for_hit",
            {},
            {
                "HITId": first.external_id,
                "NumberOfAdditionalAssignments": 1,
                "UniqueRequestToken": request_token("extend", first.external_id, 1),
            },
        )
        report = batch_sync(batch=batch, hold=timedelta(0))

    assert report.remote_assignments == 3
    assert report.flagged_unknown == [forged.pk]
    assert (report.approved, report.rejected, report.recollected) == (2, 0, 1)
    assert report.errors == []
    states = {a.external_id: (a.status, a.external_status, a.filtered) for a in Assignment.objects.all()}
    assert states == {
        "A1": ("approved", "Approved", False),
        "A2": ("approved", "Approved", True),
        "A3": ("rejected", "", True),
        "A4": ("approved", "Approved", False),
    }
    forged.refresh_from_db()
    assert forged.external_unknown
    hit1.refresh_from_db()
    assert hit1.assignments_active == 1
    posting = RemoteHIT.objects.get(pk=first.pk)
    assert (posting.max_assignments, posting.extensions) == (4, 1)
    del good, spam, auto, hit2


def test_an_assignment_mturk_does_not_know_is_never_paid() -> None:
    batch = make_batch(hits=1)
    publish_locally(batch)
    assignment = submitted_assignment(batch.hits.get(), mturk_worker("W1"), external_id="FAKE")
    from crowds.services import assignment_flag_unknown

    assert assignment_flag_unknown(assignment=assignment)
    with pytest.raises(CrowdActionRefused, match="unknown to the crowd"):
        assignment_approve(assignment=assignment)
    with pytest.raises(CrowdActionRefused, match="never paid"):
        worker_bonus(assignment=assignment, amount="1.00", reason="Thanks")
    # The database itself refuses an approved assignment that the crowd does not know.
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.filter(pk=assignment.pk).update(status=AssignmentStatus.APPROVED)


def test_an_assignment_listed_under_another_worker_is_flagged_as_forged(monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    (posting,) = publish_locally(batch)
    assignment = submitted_assignment(
        posting.hit, mturk_worker("IMPOSTOR"), external_id="A1", submitted_at=timezone.now()
    )
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response(
            "list_assignments_for_hit",
            {"Assignments": [remote_assignment("A1", "REAL", posting.external_id)]},
            _list(posting.external_id),
        )
        # The real worker's assignment used one of three slots on MTurk; the impostor's never did.
        stub.add_response("get_hit", _get_hit(posting.external_id, available=2), {"HITId": posting.external_id})
        stub.add_response(
            "create_additional_assignments_for_hit",
            {},
            {
                "HITId": posting.external_id,
                "NumberOfAdditionalAssignments": 1,
                "UniqueRequestToken": request_token("extend", posting.external_id, 1),
            },
        )
        report = batch_sync(batch=batch, hold=timedelta(0))
    assert report.flagged_unknown == [assignment.pk]
    assert report.approved == 0


def test_work_submitted_moments_ago_is_neither_flagged_nor_decided_yet(monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    (posting,) = publish_locally(batch)
    just_now = submitted_assignment(posting.hit, mturk_worker("W1"), external_id="A1", submitted_at=timezone.now())
    listed = submitted_assignment(posting.hit, mturk_worker("W2"), external_id="A2", submitted_at=timezone.now())
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response(
            "list_assignments_for_hit",
            {"Assignments": [remote_assignment("A2", "W2", posting.external_id)]},
            _list(posting.external_id),
        )
        report = batch_sync(batch=batch, hold=timedelta(hours=1))
    assert report.flagged_unknown == [] and report.approved == 0
    just_now.refresh_from_db()
    listed.refresh_from_db()
    assert (just_now.external_unknown, listed.external_status, listed.status) == (False, "Submitted", "submitted")


def test_the_reject_policy_rejects_filtered_work_and_submissions_without_answers(monkeypatch: Any) -> None:
    batch = make_batch(hits=1, filtered_policy=FilteredPolicy.REJECT, rejection_message="Checks failed.")
    (posting,) = publish_locally(batch)
    submitted_assignment(posting.hit, mturk_worker("W1"), external_id="A1", filtered=True)
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response(
            "list_assignments_for_hit",
            {
                "Assignments": [
                    remote_assignment("A1", "W1", posting.external_id),
                    remote_assignment("ORPHAN", "W9", posting.external_id),
                ]
            },
            _list(posting.external_id),
        )
        stub.add_response("reject_assignment", {}, {"AssignmentId": "A1", "RequesterFeedback": "Checks failed."})
        stub.add_response("reject_assignment", {}, {"AssignmentId": "ORPHAN", "RequesterFeedback": NO_WORK_MESSAGE})
        stub.add_response("get_hit", _get_hit(posting.external_id, available=1), {"HITId": posting.external_id})
        stub.add_response(
            "create_additional_assignments_for_hit",
            {},
            {
                "HITId": posting.external_id,
                "NumberOfAdditionalAssignments": 2,
                "UniqueRequestToken": request_token("extend", posting.external_id, 1),
            },
        )
        report = batch_sync(batch=batch, hold=timedelta(0))
    assert (report.rejected, report.orphans) == (2, ["ORPHAN"])
    assert Assignment.objects.get(external_id="A1").status == "rejected"
    assert not Assignment.objects.filter(external_id="ORPHAN").exists()


def test_recollection_that_would_reach_ten_assignments_posts_a_new_hit_instead(monkeypatch: Any) -> None:
    batch = make_batch(hits=1, step=3, assignments=7)
    (posting,) = publish_locally(batch)
    batch.refresh_from_db()
    hit = posting.hit
    for n in range(7):
        submitted_assignment(hit, mturk_worker(f"W{n}"), external_id=f"A{n}", filtered=n < 3)
    from crowds.mturk import external_question_xml, hit_token

    token = hit_token(batch=batch, hit=hit, round=1)
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response(
            "list_assignments_for_hit",
            {"Assignments": [remote_assignment(f"A{n}", f"W{n}", posting.external_id) for n in range(7)]},
            _list(posting.external_id),
        )
        stub.add_response(
            "get_hit", _get_hit(posting.external_id, available=0, max_assignments=7), {"HITId": posting.external_id}
        )
        stub.add_response(
            "create_hit_with_hit_type",
            {"HIT": {"HITId": "ROUND1"}},
            {
                "HITTypeId": "HT1",
                "MaxAssignments": 3,
                "LifetimeInSeconds": 7 * 24 * 3600,
                "Question": external_question_xml(f"{SITE}/mturk/hit/{hit.public_token}/"),
                "RequesterAnnotation": token,
                "UniqueRequestToken": token,
            },
        )
        report = batch_sync(batch=batch, hold=timedelta(days=1))
    assert report.recollected == 3
    assert list(RemoteHIT.objects.filter(hit=hit).values_list("round", "external_id", "max_assignments")) == [
        (0, posting.external_id, 7),
        (1, "ROUND1", 3),
    ]
    HIT.objects.get(pk=hit.pk)  # the first posting stays the HIT's external id
    assert HIT.objects.get(pk=hit.pk).external_id == posting.external_id


def test_an_expired_posting_is_replaced_by_a_new_round_rather_than_grown(monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    (posting,) = publish_locally(batch)
    hit = posting.hit
    submitted_assignment(hit, mturk_worker("W1"), external_id="A1", filtered=True)
    from crowds.mturk import external_question_xml, hit_token

    token = hit_token(batch=batch, hit=hit, round=1)
    expired = _get_hit(posting.external_id, available=2, status="Reviewable")
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response(
            "list_assignments_for_hit",
            {"Assignments": [remote_assignment("A1", "W1", posting.external_id)]},
            _list(posting.external_id),
        )
        stub.add_response("get_hit", expired, {"HITId": posting.external_id})
        stub.add_response(
            "create_hit_with_hit_type",
            {"HIT": {"HITId": "ROUND1"}},
            {
                "HITTypeId": "HT1",
                "MaxAssignments": 3,
                "LifetimeInSeconds": 7 * 24 * 3600,
                "Question": external_question_xml(f"{SITE}/mturk/hit/{hit.public_token}/"),
                "RequesterAnnotation": token,
                "UniqueRequestToken": token,
            },
        )
        report = batch_sync(batch=batch, hold=timedelta(days=1))
    assert report.recollected == 3


def _run_elsewhere_holding(batch: Batch) -> Any:
    """Another process's connection holding the batch, as a publish or sync running there does."""
    other = connections.create_connection("default")
    with other.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [BATCH_LOCK_SPACE, batch.pk])
    return other


@pytest.mark.production_database(
    "another process's hold is a session lock of PostgreSQL's, ended with its connection; SQLite's runs hold a lease"
)
def test_a_sync_already_running_makes_a_second_one_step_aside(monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    publish_locally(batch)
    other = _run_elsewhere_holding(batch)
    try:
        with stubbed_mturk(monkeypatch):
            report = batch_sync(batch=batch)
        assert report.skipped == "another sync or publish holds the batch"
        with pytest.raises(CrowdActionRefused, match="try again as soon as that run ends"):
            batch_expire(batch=batch)
    finally:
        other.close()


@pytest.mark.production_database(
    "another process's hold is a session lock of PostgreSQL's, ended with its connection; SQLite's runs hold a lease"
)
def test_a_publish_killed_midway_holds_nothing_and_its_last_hit_takes_workers(monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    # The dying run made HIT "LIVE" on MTurk, then its process (and connection) died before recording it.
    _run_elsewhere_holding(batch).close()
    opened = assignment_accept_remote(
        hit=batch.hits.get(), worker_external_id="W1", assignment_external_id="A1", hit_external_id="LIVE"
    )
    assert opened.status == AssignmentStatus.CLAIMED
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
        stub.add_response("create_hit_type", {"HITTypeId": "HT1"})
        stub.add_client_error(
            "create_hit_with_hit_type",
            service_error_code="RequestError",
            service_message="The request has already been processed.",
        )
        token = hit_token(batch=batch, hit=batch.hits.get(), round=0)
        stub.add_response("list_hits", {"HITs": [{"HITId": "LIVE", "RequesterAnnotation": token}]}, {"MaxResults": 100})
        result = batch_publish(batch=batch, options={"sandbox": True})
    assert (result.hits_created, result.hits_existing) == (0, 1)
    assert RemoteHIT.objects.get().external_id == "LIVE"


def test_workers_blocked_here_are_blocked_on_mturk_once(monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    (posting,) = publish_locally(batch)
    worker = mturk_worker("W1")
    submitted_assignment(posting.hit, worker, external_id="A1", submitted_at=timezone.now())
    worker.blocked = True
    worker.blocked_reason = "Answers at random."
    worker.save()
    listing = {"Assignments": [remote_assignment("A1", "W1", posting.external_id)]}
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("list_assignments_for_hit", listing, _list(posting.external_id))
        stub.add_response("create_worker_block", {}, {"WorkerId": "W1", "Reason": "Answers at random."})
        assert batch_sync(batch=batch, hold=timedelta(hours=1)).workers_blocked == 1
        stub.add_response("list_assignments_for_hit", listing, _list(posting.external_id))
        assert batch_sync(batch=batch, hold=timedelta(hours=1)).workers_blocked == 0
    batch.refresh_from_db()
    assert batch.external["blocked_workers"] == ["W1"]


def test_postings_of_targets_that_are_done_are_expired_and_never_re_collected(monkeypatch: Any) -> None:
    batch = make_batch(hits=2)
    finished, running = publish_locally(batch)
    # The first target got its labels elsewhere (an import) while its HIT still had room, and lost work.
    submitted_assignment(finished.hit, mturk_worker("W1"), external_id="A1", filtered=True)
    Target.objects.filter(pk=finished.hit.target_id).update(stage=TargetStage.DONE)
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response(
            "list_assignments_for_hit",
            {"Assignments": [remote_assignment("A1", "W1", finished.external_id)]},
            _list(finished.external_id),
        )
        stub.add_response("list_assignments_for_hit", {"Assignments": []}, _list(running.external_id))
        stub.add_response("update_expiration_for_hit", {}, {"HITId": finished.external_id, "ExpireAt": EXPIRE_NOW})
        report = batch_sync(batch=batch, review=False)
        # A second sync has nothing more to expire.
        stub.add_response("list_assignments_for_hit", {"Assignments": []}, _list(finished.external_id))
        stub.add_response("list_assignments_for_hit", {"Assignments": []}, _list(running.external_id))
        again = batch_sync(batch=batch, review=False)
    assert (report.withdrawn, report.recollected, again.withdrawn) == (1, 0, 0)
    assert RemoteHIT.objects.get(pk=finished.pk).expired_at is not None
    assert RemoteHIT.objects.get(pk=running.pk).expired_at is None


def test_a_sync_without_review_reconciles_and_spends_nothing(monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    (posting,) = publish_locally(batch)
    lost = submitted_assignment(posting.hit, mturk_worker("W1"), external_id="A1", filtered=True)
    Bonus.objects.create(assignment=lost, worker=lost.worker, amount="0.50", reason="Thanks", token="t1")
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response(
            "list_assignments_for_hit",
            {"Assignments": [remote_assignment("A1", "W1", posting.external_id)]},
            _list(posting.external_id),
        )
        # No get_hit, create_additional_assignments_for_hit or send_bonus: the Stubber refuses any call not queued.
        report = batch_sync(batch=batch, review=False)
    assert (report.updated, report.recollected, report.bonuses_sent, report.errors) == (1, 0, 0, [])
    assert Bonus.objects.get().status == "pending"


def test_recollection_counts_the_assignments_workers_are_still_doing(monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    (posting,) = publish_locally(batch)
    submitted_assignment(posting.hit, mturk_worker("W1"), external_id="A1", filtered=True)
    in_progress = _get_hit(posting.external_id, available=0)
    in_progress["HIT"]["NumberOfAssignmentsPending"] = 2
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response(
            "list_assignments_for_hit",
            {"Assignments": [remote_assignment("A1", "W1", posting.external_id)]},
            _list(posting.external_id),
        )
        stub.add_response("get_hit", in_progress, {"HITId": posting.external_id})
        # One more is bought: three needed, two still being done on MTurk.
        _extend(stub, posting, 1)
        report = batch_sync(batch=batch, hold=timedelta(days=1))
    assert report.recollected == 1


def test_work_submitted_on_mturk_without_answers_here_is_recorded_shown_and_its_hit_re_collected(
    monkeypatch: Any, client: Any, django_user_model: Any
) -> None:
    batch = make_batch(hits=1)
    (posting,) = publish_locally(batch)
    for number in range(2):
        submitted_assignment(posting.hit, mturk_worker(f"W{number}"), external_id=f"A{number}")
    listing = {
        "Assignments": [
            *(remote_assignment(f"A{number}", f"W{number}", posting.external_id) for number in range(2)),
            remote_assignment("ORPHAN", "W9", posting.external_id),
        ]
    }
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("list_assignments_for_hit", listing, _list(posting.external_id))
        # MTurk's three assignments are all used: two counted here, one empty.
        stub.add_response("get_hit", _get_hit(posting.external_id, available=0), {"HITId": posting.external_id})
        _extend(stub, posting, 1)
        report = batch_sync(batch=batch, hold=timedelta(days=1))
    assert (report.orphans, report.recollected) == (["ORPHAN"], 1)
    assert HIT.objects.get(pk=posting.hit_id).assignments_active == 2
    batch.refresh_from_db()
    assert batch.external["orphans"] == [
        {"assignment": "ORPHAN", "worker": "W9", "hit": posting.hit_id, "status": "Submitted"}
    ]
    page = _crowd_page(client, django_user_model, batch)
    assert "Submitted on MTurk without answers here" in page and "ORPHAN" in page


def _crowd_page(client: Any, user_model: Any, batch: Batch) -> str:
    researcher = user_model.objects.create_user("r", is_staff=True)
    researcher.groups.add(Group.objects.get_or_create(name="researchers")[0])
    client.force_login(researcher)
    return str(client.get(f"/batches/{batch.pk}/crowd/").content.decode())


def test_re_collection_stops_at_the_benchmarks_budget_with_a_clear_message(monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    (posting,) = publish_locally(batch)
    submitted_assignment(posting.hit, mturk_worker("W1"), external_id="A1", filtered=True)
    limits = CrowdLimits.objects.create(benchmark=batch.benchmark, recollection_budget=Decimal("0.20"))
    # Shown before the sync buys anything: three missing assignments at $0.12.
    assert batch_recollection_due(batch=batch) == Decimal("0.36")
    listing = {"Assignments": [remote_assignment("A1", "W1", posting.external_id)]}
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("list_assignments_for_hit", listing, _list(posting.external_id))
        stub.add_response("get_hit", _get_hit(posting.external_id, available=0), {"HITId": posting.external_id})
        report = batch_sync(batch=batch, hold=timedelta(days=1))
    assert report.recollected == 0
    assert report.errors == [
        f"re-collecting HIT {posting.hit_id}: HIT {posting.hit_id} needs 3 more assignments ($0.36 with fees), "
        "more than the $0.20 left of the benchmark's re-collection budget: raise it to go on"
    ]
    limits.recollection_budget = Decimal("1.00")
    limits.save()
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("list_assignments_for_hit", listing, _list(posting.external_id))
        stub.add_response("get_hit", _get_hit(posting.external_id, available=0), {"HITId": posting.external_id})
        stub.add_response("create_additional_assignments_for_hit", {}, None)
        report = batch_sync(batch=batch, hold=timedelta(days=1))
    assert (report.recollected, report.recollection_cost) == (3, Decimal("0.36"))
    assert benchmark_recollection_left(benchmark=batch.benchmark) == Decimal("0.64")


def test_paid_so_far_is_exactly_what_mturk_was_asked_to_pay(
    monkeypatch: Any, client: Any, django_user_model: Any
) -> None:
    batch = make_batch(hits=1)
    (posting,) = publish_locally(batch)
    for number in range(3):
        submitted_assignment(posting.hit, mturk_worker(f"W{number}"), external_id=f"A{number}")
    listing = {"Assignments": [remote_assignment(f"A{n}", f"W{n}", posting.external_id) for n in range(3)]}
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("list_assignments_for_hit", listing, _list(posting.external_id))
        for number in range(3):
            stub.add_response("approve_assignment", {}, {"AssignmentId": f"A{number}", "OverrideRejection": False})
        batch_sync(batch=batch, hold=timedelta(0))
        stub.add_response("list_bonus_payments", {"BonusPayments": []}, {"AssignmentId": "A0", "MaxResults": 100})
        stub.add_response("send_bonus", {}, None)
        worker_bonus(assignment=Assignment.objects.get(external_id="A0"), amount="0.50", reason="Careful work")
    spending = batch_spending(batch=batch)
    # Three rewards of $0.10 with $0.02 fee each, a $0.50 bonus with its $0.10 fee.
    assert (spending.rewards_paid, spending.bonuses_paid, spending.fees_paid) == (
        Decimal("0.30"),
        Decimal("0.50"),
        Decimal("0.16"),
    )
    assert (spending.paid, spending.projected) == (Decimal("0.96"), Decimal("0.96"))
    assert '<div class="stat" id="paid">$0.96 / $0.96</div>' in _crowd_page(client, django_user_model, batch)
