"""Forged MTurk ids on the ExternalQuestion page change nothing that counts (docs/design.md §4).

Anyone who knows a public HITId can open ``/mturk/hit/<id>/`` with an invented ``workerId`` and
``assignmentId``. Each attack is replayed here, through the page and a sync against botocore's
Stubber, and must leave slots, labels, flags, the pipeline and payments as they were.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from annotation.models import Label, Target, TargetStage
from crowds.services import assignment_accept_remote, batch_sync
from hits.models import HIT, Assignment, AssignmentStatus, FilteredPolicy, HITItem, RemoteHIT
from hits.services import assignment_submit
from review.models import WorkerFlag
from review.services import benchmark_refresh
from schemes.swords.items import ItemKind
from tests.crowds.crowd_helpers import SITE, make_batch, publish_locally, remote_assignment, stubbed_mturk

pytestmark = pytest.mark.django_db

SUBMIT_ORIGIN = "https://workersandbox.mturk.com"
LISTED = ["Submitted", "Approved", "Rejected"]


@pytest.fixture(autouse=True)
def _public_site(settings: Any) -> None:
    settings.SITE_URL = SITE
    settings.MTURK_RECONCILE_GRACE_SECONDS = 900


def _answers(hit: HIT, *, honest: bool) -> dict[int, str]:
    """Honest answers pass both controls; the others reject everything, failing the target control."""
    return {
        item.pk: "reject" if not honest or item.kind == ItemKind.CONTROL_DISTRACTOR else "accept"
        for item in HITItem.objects.filter(hit=hit)
    }


def _work(posting: RemoteHIT, worker: str, assignment: str, *, honest: bool, hours_ago: float = 2) -> Assignment:
    """A first visit and a submit through the page's services, ``hours_ago`` in the past."""
    when = timezone.now() - timedelta(hours=hours_ago)
    opened = assignment_accept_remote(
        hit=posting.hit,
        worker_external_id=worker,
        assignment_external_id=assignment,
        hit_external_id=posting.external_id,
        now=when - timedelta(minutes=2),
    )
    return assignment_submit(assignment=opened, answers=_answers(posting.hit, honest=honest), now=when)


def _listing(stub: Any, posting: RemoteHIT, *assignments: dict[str, Any]) -> None:
    stub.add_response(
        "list_assignments_for_hit",
        {"Assignments": list(assignments)},
        {"HITId": posting.external_id, "MaxResults": 100, "AssignmentStatuses": LISTED},
    )


def _still_offered(stub: Any, posting: RemoteHIT, *, available: int) -> None:
    state = {
        "HITId": posting.external_id,
        "HITStatus": "Assignable",
        "MaxAssignments": 3,
        "NumberOfAssignmentsAvailable": available,
        "NumberOfAssignmentsPending": 0,
        "Expiration": timezone.now() + timedelta(days=3),
    }
    stub.add_response("get_hit", {"HIT": state}, {"HITId": posting.external_id})


def test_forged_opens_through_the_page_take_no_slot_and_real_workers_still_get_in(settings: Any) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "crowd-binding": "40/hour"},
    }
    (posting,) = publish_locally(make_batch(hits=1, assignments=3))
    client = Client()
    answers = []
    for number in range(150):
        url = (
            f"/mturk/hit/{posting.hit.public_token}/?assignmentId=FAKE{number}&hitId={posting.external_id}"
            f"&workerId=FORGED{number}&turkSubmitTo={SUBMIT_ORIGIN}"
        )
        answers.append(client.get(url).status_code)
    # One address binds at most THROTTLE_CROWD_BINDING_RATE workers; the rest are told to wait.
    assert answers == [200] * 40 + [429] * 110
    assert Assignment.objects.count() == 40
    assert HIT.objects.get(pk=posting.hit_id).assignments_active == 0
    real = (
        f"/mturk/hit/{posting.hit.public_token}/?assignmentId=REAL1&hitId={posting.external_id}"
        f"&workerId=REALWORKER&turkSubmitTo={SUBMIT_ORIGIN}"
    )
    assert Client(REMOTE_ADDR="192.0.2.7").get(real).status_code == 200


def test_forged_submissions_add_no_labels_and_move_no_target_before_a_sync() -> None:
    batch = make_batch(hits=1, assignments=3)
    (posting,) = publish_locally(batch)
    for number in range(3):
        _work(posting, f"FORGED{number}", f"FAKE{number}", honest=True)
    result = benchmark_refresh(benchmark=batch.benchmark)
    assert not Label.objects.exists()
    assert Target.objects.get(pk=posting.hit.target_id).stage != TargetStage.DONE
    assert HIT.objects.get(pk=posting.hit_id).assignments_active == 0
    assert result.filtered == 0


def test_forged_failing_work_under_a_real_worker_id_never_frames_that_worker(monkeypatch: Any) -> None:
    batch = make_batch(hits=5, filtered_policy=FilteredPolicy.REJECT, rejection_message="Checks failed.")
    postings = publish_locally(batch)
    genuine = [_work(posting, "REALWORKER", f"REAL{n}", honest=True) for n, posting in enumerate(postings[:2])]
    forged = [_work(posting, "REALWORKER", f"FAKE{n}", honest=False) for n, posting in enumerate(postings[2:])]
    benchmark_refresh(benchmark=batch.benchmark)
    with stubbed_mturk(monkeypatch) as stub:
        for number, posting in enumerate(postings):
            listed = [remote_assignment(f"REAL{number}", "REALWORKER", posting.external_id)] if number < 2 else []
            _listing(stub, posting, *listed)
        for number in range(2):
            stub.add_response("approve_assignment", {}, {"AssignmentId": f"REAL{number}", "OverrideRejection": False})
        # The forged assignments were never MTurk's: each posting still offers all three.
        for posting in postings[2:]:
            _still_offered(stub, posting, available=3)
        report = batch_sync(batch=batch, hold=timedelta(0))
    benchmark_refresh(benchmark=batch.benchmark)

    assert sorted(report.flagged_unknown) == sorted(a.pk for a in forged)
    assert (report.approved, report.rejected, report.recollected) == (2, 0, 0)
    assert not WorkerFlag.objects.exists()
    states = {a.external_id: (a.status, a.filtered) for a in Assignment.objects.all()}
    assert states == {
        "REAL0": ("approved", False),
        "REAL1": ("approved", False),
        "FAKE0": ("rejected", True),
        "FAKE1": ("rejected", True),
        "FAKE2": ("rejected", True),
    }
    assert set(Label.objects.values_list("assignment_id", flat=True)) == {a.pk for a in genuine}


def test_a_forged_assignment_id_cannot_take_over_a_real_workers_claim() -> None:
    (posting,) = publish_locally(make_batch(hits=1))
    client = Client()
    base = (
        f"/mturk/hit/{posting.hit.public_token}/?hitId={posting.external_id}"
        f"&workerId=REALWORKER&turkSubmitTo={SUBMIT_ORIGIN}"
    )
    page = client.get(base + "&assignmentId=REAL1").content.decode()
    token = re.search(r'name="token" value="([^"]*)"', page)
    assert token
    # The forged id gets a pending row of its own; the real claim keeps its id.
    assert client.get(base + "&assignmentId=FORGED1").status_code == 200
    # The real worker's own form still submits their own assignment.
    answers = {f"item-{pk}": value for pk, value in _answers(posting.hit, honest=True).items()}
    response = client.post(
        f"/mturk/hit/{posting.hit.public_token}/", {"assignmentId": "REAL1", "token": token.group(1), **answers}
    )
    assert response.status_code == 200
    assert sorted(Assignment.objects.values_list("external_id", "status")) == [
        ("FORGED1", AssignmentStatus.CLAIMED),
        ("REAL1", AssignmentStatus.SUBMITTED),
    ]
