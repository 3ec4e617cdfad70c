"""What an outsider can do with a crowd page's URL: nothing that counts (docs/design.md §4).

Each reproduction of the audit is replayed through the pages, then a sync against botocore's Stubber
(MTurk) or the Prolific fake: a forged visit blocks, flags, rejects or costs no real worker; a crowd
submission with no work here is reported and rejected, never left to the crowd's auto-approval; an
anonymous preview writes nothing, first visits are bounded per address, and unpublished or closed
batches are not there at all, under ids nobody can count.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from annotation.models import Label, Worker
from crowds.services import batch_notify, batch_publish, batch_sync
from crowds.services.sync import NO_WORK_MESSAGE
from hits.models import HIT, Assignment, AssignmentStatus, Batch, BatchStatus, FilteredPolicy, HITItem, RemoteHIT
from schemes.swords.items import ItemKind
from tests.crowds.crowd_helpers import SITE, make_batch, publish_locally, remote_assignment, stubbed_mturk
from tests.crowds.prolific_fake import FakeProlific, fake_prolific

pytestmark = pytest.mark.django_db

SUBMIT_ORIGIN = "https://workersandbox.mturk.com"
LISTED = ["Submitted", "Approved", "Rejected"]
# Prolific's ids: 24 characters.
REAL_PID = "a" * 24


@pytest.fixture(autouse=True)
def _public_site(settings: Any) -> None:
    settings.SITE_URL = SITE
    settings.MTURK_RECONCILE_GRACE_SECONDS = 900


def _rates(settings: Any, **rates: str) -> None:
    current = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {**current, **rates}}


def _answers(hit: HIT, *, honest: bool) -> dict[str, str]:
    """Honest answers pass both controls; the others reject everything, failing the target control."""
    return {
        f"item-{item.pk}": "reject" if not honest or item.kind == ItemKind.CONTROL_DISTRACTOR else "accept"
        for item in HITItem.objects.filter(hit=hit)
    }


def _mturk_url(posting: RemoteHIT, *, worker: str, assignment: str) -> str:
    return (
        f"/mturk/hit/{posting.hit.public_token}/?assignmentId={assignment}&hitId={posting.external_id}"
        f"&workerId={worker}&turkSubmitTo={SUBMIT_ORIGIN}"
    )


def _token(page: Any) -> str:
    found = re.search(r'name="token" value="([^"]*)"', page.content.decode())
    assert found, page.content.decode()[:500]
    return found.group(1)


def _work_on_mturk(posting: RemoteHIT, *, worker: str, assignment: str, honest: bool, address: str) -> Assignment:
    """Open the HIT page with these ids and submit it, as a browser at ``address`` would."""
    client = Client(REMOTE_ADDR=address)
    page = client.get(_mturk_url(posting, worker=worker, assignment=assignment))
    assert page.status_code == 200, page.content.decode()[:500]
    sent = client.post(
        f"/mturk/hit/{posting.hit.public_token}/",
        {"assignmentId": assignment, "token": _token(page), **_answers(posting.hit, honest=honest)},
    )
    assert sent.status_code == 200
    saved = Assignment.objects.get(external_id=assignment, worker__external_id=worker)
    assert saved.status == AssignmentStatus.SUBMITTED
    # Saved two hours ago: past the reconcile grace and the approval hold.
    Assignment.objects.filter(pk=saved.pk).update(submitted_at=timezone.now() - timedelta(hours=2))
    return saved


def _listing(stub: Any, posting: RemoteHIT, *assignments: dict[str, Any]) -> None:
    stub.add_response(
        "list_assignments_for_hit",
        {"Assignments": list(assignments)},
        {"HITId": posting.external_id, "MaxResults": 100, "AssignmentStatuses": LISTED},
    )


def _still_offered(stub: Any, posting: RemoteHIT, *, available: int, maximum: int = 3) -> None:
    state = {
        "HITId": posting.external_id,
        "HITStatus": "Assignable",
        "MaxAssignments": maximum,
        "NumberOfAssignmentsAvailable": available,
        "NumberOfAssignmentsPending": 0,
        "Expiration": timezone.now() + timedelta(days=3),
    }
    stub.add_response("get_hit", {"HIT": state}, {"HITId": posting.external_id})


# -- MTurk: forged visits lock nobody out ------------------------------------------------------------


def test_a_made_up_assignment_id_under_a_real_worker_neither_locks_them_out_nor_gets_them_rejected(
    monkeypatch: Any,
) -> None:
    batch = make_batch(hits=1, assignments=3, filtered_policy=FilteredPolicy.REJECT, rejection_message="Checks failed.")
    (posting,) = publish_locally(batch)
    forged = _work_on_mturk(posting, worker="REALWORKER", assignment="MADEUP1", honest=False, address="198.51.100.9")

    # The real worker accepts the HIT on MTurk and opens it: the page is theirs, not "already done".
    genuine = _work_on_mturk(posting, worker="REALWORKER", assignment="REAL1", honest=True, address="203.0.113.5")

    with stubbed_mturk(monkeypatch) as stub:
        _listing(stub, posting, remote_assignment("REAL1", "REALWORKER", posting.external_id))
        # Approved, never rejected: the Stubber refuses any call not listed here.
        stub.add_response("approve_assignment", {}, {"AssignmentId": "REAL1", "OverrideRejection": False})
        _still_offered(stub, posting, available=2)
        report = batch_sync(batch=batch, hold=timedelta(0))

    forged.refresh_from_db()
    genuine.refresh_from_db()
    assert report.flagged_unknown == [forged.pk]
    assert (report.approved, report.rejected, report.orphans) == (1, 0, [])
    assert (genuine.status, genuine.filtered, genuine.external_status) == ("approved", False, "Approved")
    assert (forged.status, forged.external_unknown) == ("rejected", True)
    assert set(Label.objects.values_list("assignment_id", flat=True)) == {genuine.pk}
    assert HIT.objects.get(pk=posting.hit_id).assignments_active == 1


def test_a_real_assignment_id_bound_to_another_worker_neither_locks_the_real_worker_out_nor_counts(
    monkeypatch: Any,
) -> None:
    batch = make_batch(hits=1, assignments=3)
    (posting,) = publish_locally(batch)
    forged = _work_on_mturk(posting, worker="FORGER", assignment="REAL1", honest=True, address="198.51.100.9")
    genuine = _work_on_mturk(posting, worker="REALWORKER", assignment="REAL1", honest=True, address="203.0.113.5")

    with stubbed_mturk(monkeypatch) as stub:
        _listing(stub, posting, remote_assignment("REAL1", "REALWORKER", posting.external_id))
        stub.add_response("approve_assignment", {}, {"AssignmentId": "REAL1", "OverrideRejection": False})
        _still_offered(stub, posting, available=2)
        report = batch_sync(batch=batch, hold=timedelta(0))

    forged.refresh_from_db()
    genuine.refresh_from_db()
    assert report.flagged_unknown == [forged.pk]
    assert report.approved == 1 and report.orphans == []
    assert genuine.status == "approved" and forged.external_unknown
    assert set(Label.objects.values_list("assignment_id", flat=True)) == {genuine.pk}


@pytest.mark.parametrize("policy", [FilteredPolicy.APPROVE, FilteredPolicy.REJECT])
def test_an_mturk_submission_with_work_stored_only_under_another_worker_is_reported_and_rejected(
    monkeypatch: Any, policy: str
) -> None:
    batch = make_batch(hits=1, assignments=3, filtered_policy=policy, rejection_message="Checks failed.")
    (posting,) = publish_locally(batch)
    # The secret assignment id, bound to a forged worker; the real worker submits on MTurk without the page.
    forged = _work_on_mturk(posting, worker="FORGER", assignment="REAL1", honest=True, address="198.51.100.9")

    with stubbed_mturk(monkeypatch) as stub:
        _listing(stub, posting, remote_assignment("REAL1", "REALWORKER", posting.external_id))
        stub.add_response("reject_assignment", {}, {"AssignmentId": "REAL1", "RequesterFeedback": NO_WORK_MESSAGE})
        _still_offered(stub, posting, available=2)
        report = batch_sync(batch=batch, hold=timedelta(0))

    forged.refresh_from_db()
    assert report.orphans == ["REAL1"]
    assert (report.approved, report.rejected) == (0, 1)
    assert forged.external_unknown and not Label.objects.exists()
    batch.refresh_from_db()
    assert batch.external["orphans"] == [
        {"assignment": "REAL1", "worker": "REALWORKER", "hit": posting.hit_id, "status": "Submitted"}
    ]


def test_an_orphan_still_inside_the_hold_waits_and_is_not_rejected_yet(monkeypatch: Any) -> None:
    batch = make_batch(hits=1, assignments=3)
    (posting,) = publish_locally(batch)
    recent = remote_assignment("ORPHAN1", "SOMEONE", posting.external_id, SubmitTime=timezone.now())
    with stubbed_mturk(monkeypatch) as stub:
        _listing(stub, posting, recent)
        _still_offered(stub, posting, available=2)
        report = batch_sync(batch=batch, hold=timedelta(hours=1))
    assert (report.orphans, report.rejected) == (["ORPHAN1"], 0)


def test_notifications_reach_only_workers_mturk_confirmed(monkeypatch: Any) -> None:
    batch = make_batch(hits=1, assignments=3)
    (posting,) = publish_locally(batch)
    _work_on_mturk(posting, worker="FORGED1", assignment="FAKE1", honest=True, address="198.51.100.9")
    _work_on_mturk(posting, worker="REALWORKER", assignment="REAL1", honest=True, address="203.0.113.5")
    with stubbed_mturk(monkeypatch) as stub:
        _listing(stub, posting, remote_assignment("REAL1", "REALWORKER", posting.external_id))
        batch_sync(batch=batch, review=False)
        stub.add_response(
            "notify_workers",
            {"NotifyWorkersFailureStatuses": []},
            {"Subject": "Step 3", "MessageText": "Up now.", "WorkerIds": ["REALWORKER"]},
        )
        result = batch_notify(batch=batch, subject="Step 3", text="Up now.")
    assert result.notified == 1


# -- MTurk: anonymous pages write nothing, and are bounded ------------------------------------------


def test_a_preview_writes_nothing_however_often_it_is_opened() -> None:
    (posting,) = publish_locally(make_batch(hits=1))
    client = Client()
    for _ in range(30):
        page = client.get(f"/mturk/hit/{posting.hit.public_token}/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE")
        assert page.status_code == 200
    assert (Worker.objects.count(), Assignment.objects.count()) == (0, 0)


def test_the_crowd_pages_are_throttled_per_address(settings: Any) -> None:
    _rates(settings, **{"crowd-page": "5/minute"})
    (posting,) = publish_locally(make_batch(hits=1))
    url = f"/mturk/hit/{posting.hit.public_token}/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE"
    client = Client(REMOTE_ADDR="198.51.100.9")
    statuses = [client.get(url).status_code for _ in range(7)]
    assert statuses == [200] * 5 + [429] * 2
    refused = client.get(url)
    assert int(refused["Retry-After"]) >= 1
    # Another address is counted apart.
    assert Client(REMOTE_ADDR="203.0.113.5").get(url).status_code == 200


def test_first_visits_write_a_bounded_number_of_pending_bindings_per_address_and_reloads_none(
    settings: Any,
) -> None:
    _rates(settings, **{"crowd-binding": "3/hour"})
    (posting,) = publish_locally(make_batch(hits=1))
    client = Client(REMOTE_ADDR="198.51.100.9")
    first = [client.get(_mturk_url(posting, worker=f"W{n}", assignment=f"A{n}")).status_code for n in range(5)]
    assert first == [200, 200, 200, 429, 429]
    # A reload of a binding already made writes nothing and is never refused for it.
    assert client.get(_mturk_url(posting, worker="W0", assignment="A0")).status_code == 200
    assert (Worker.objects.count(), Assignment.objects.count()) == (3, 3)


# -- unpublished and closed batches, and ids nobody can count -----------------------------------------


def test_the_hit_of_an_unpublished_or_closed_batch_is_not_there() -> None:
    batch = make_batch(hits=2)
    hit = batch.hits.order_by("id").first()
    assert hit is not None
    preview = "?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE"
    accepted = f"?assignmentId=A1&hitId=H1&workerId=W1&turkSubmitTo={SUBMIT_ORIGIN}"
    client = Client()
    # Not published yet: nothing, under the token or the database id.
    for query in (preview, accepted):
        assert client.get(f"/mturk/hit/{hit.public_token}/{query}").status_code == 404
        assert client.get(f"/mturk/hit/{hit.pk}/{query}").status_code == 404
    postings = publish_locally(batch)
    assert client.get(f"/mturk/hit/{hit.public_token}/{preview}").status_code == 200
    # Bound while open: a worker's own reload still works after the batch is closed, nothing else does.
    opened = client.get(_mturk_url(postings[0], worker="W1", assignment="A1"))
    assert opened.status_code == 200
    Batch.objects.filter(pk=batch.pk).update(status=BatchStatus.CLOSED)
    assert client.get(f"/mturk/hit/{hit.public_token}/{preview}").status_code == 404
    assert client.get(_mturk_url(postings[0], worker="W2", assignment="A2")).status_code == 404
    assert client.get(f"/mturk/hit/{hit.pk}/{preview}").status_code == 404
    assert client.get(_mturk_url(postings[0], worker="W1", assignment="A1")).status_code == 200
    assert Assignment.objects.count() == 1


def test_the_old_address_of_a_published_open_hit_sends_on_to_its_token_and_counting_finds_nothing() -> None:
    batch = make_batch(hits=1)
    (posting,) = publish_locally(batch)
    query = f"assignmentId=A1&hitId={posting.external_id}&workerId=W1&turkSubmitTo={SUBMIT_ORIGIN}"
    moved = Client().get(f"/mturk/hit/{posting.hit_id}/?{query}")
    assert moved.status_code == 307
    assert moved["Location"] == f"/mturk/hit/{posting.hit.public_token}/?{query}"
    assert not Assignment.objects.exists()
    # Ids next to it belong to nothing published: 404, the same as for an id that does not exist.
    for other in (posting.hit_id + 1, posting.hit_id + 1000):
        assert Client().get(f"/mturk/hit/{other}/").status_code == 404


def test_public_tokens_are_random_and_the_published_external_url_uses_them(monkeypatch: Any) -> None:
    from crowds.mturk.client import external_url

    batch = make_batch(hits=3)
    tokens = [*list(batch.hits.values_list("public_token", flat=True)), batch.public_token]
    assert len(set(tokens)) == 4
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{22}", token) for token in tokens)
    hit = batch.hits.order_by("id").first()
    assert hit is not None
    assert external_url(hit) == f"{SITE}/mturk/hit/{hit.public_token}/"
    assert str(hit.pk) not in external_url(hit).rsplit("/mturk/hit/", 1)[1]


# -- Prolific ---------------------------------------------------------------------------------------


@pytest.fixture
def fake(settings: Any) -> Any:
    with fake_prolific(settings) as running:
        yield running


def _study(fake: FakeProlific, **options: Any) -> Batch:
    options.setdefault("reward", "0.20")
    batch = make_batch(backend="prolific", **options)
    batch_publish(batch=batch, options={"estimated_minutes": 1})
    batch.refresh_from_db()
    return batch


def _open_study(client: Client, path: str) -> tuple[Any, Assignment | None]:
    page = client.get(path)
    session = path.split("SESSION_ID=", 1)[1]
    return page, Assignment.objects.filter(external_id=session).order_by("-id").first()


def test_a_forged_claim_naming_a_real_participant_keeps_them_out_of_nothing(fake: FakeProlific) -> None:
    batch = _study(fake, hits=1, assignments=2)
    study = batch.external["study_id"]
    forged_path = (
        f"/prolific/study/{batch.public_token}/?PROLIFIC_PID={REAL_PID}&STUDY_ID={study}&SESSION_ID={'e' * 24}"
    )
    forged_page, forged = _open_study(Client(REMOTE_ADDR="198.51.100.9"), forged_path)
    assert forged_page.status_code == 200 and forged is not None

    # The participant takes a place on Prolific and opens the study at once: they get the HIT.
    session, path = fake.take_place(study, REAL_PID)
    client = Client(REMOTE_ADDR="203.0.113.5")
    page, genuine = _open_study(client, path)
    assert page.status_code == 200 and genuine is not None and genuine.pk != forged.pk
    sent = client.post(
        f"/prolific/study/{batch.public_token}/", {"token": _token(page), **_answers(genuine.hit, honest=True)}
    )
    assert sent.status_code == 302
    fake.complete(session, batch.external["completion_code"])
    Assignment.objects.filter(pk=genuine.pk).update(submitted_at=timezone.now() - timedelta(hours=2))

    report = batch_sync(batch=batch, hold=timedelta(0))

    genuine.refresh_from_db()
    assert (report.approved, report.rejected, report.orphans) == (1, 0, [])
    assert genuine.status == "approved"
    assert fake.submissions[session]["status"] == "APPROVED"


@pytest.mark.parametrize("policy", [FilteredPolicy.APPROVE, FilteredPolicy.REJECT])
def test_a_prolific_submission_without_work_here_is_rejected_as_no_data_under_either_policy(
    fake: FakeProlific, policy: str
) -> None:
    batch = _study(fake, hits=1, assignments=2, filtered_policy=policy, rejection_message=NO_WORK_MESSAGE)
    study = batch.external["study_id"]
    code = batch.external["completion_code"]
    # One participant never opens the page; another opens it and completes on Prolific without submitting.
    never, _ = fake.take_place(study, "b" * 24)
    fake.complete(never, code)
    opened, path = fake.take_place(study, "c" * 24)
    page, claim = _open_study(Client(), path)
    assert page.status_code == 200 and claim is not None
    fake.complete(opened, code)

    report = batch_sync(batch=batch, hold=timedelta(0))

    assert sorted(report.orphans) == sorted([never, opened])
    assert report.rejected == 2 and report.approved == 0
    for session in (never, opened):
        assert fake.submissions[session]["status"] == "REJECTED"
        assert fake.submissions[session]["rejection"]["category"] == "NO_DATA"
    assert not Label.objects.exists()


def test_the_study_page_of_an_unpublished_or_closed_batch_is_not_there(fake: FakeProlific) -> None:
    draft = make_batch(name="draft", backend="prolific", reward="0.20", hits=1)
    assert Client().get(f"/prolific/study/{draft.public_token}/").status_code == 404
    assert Client().get(f"/prolific/study/{draft.pk}/").status_code == 404
    batch = _study(fake, hits=1, assignments=2)
    assert Client().get(f"/prolific/study/{batch.public_token}/").status_code == 200
    moved = Client().get(f"/prolific/study/{batch.pk}/?PROLIFIC_PID=x")
    assert (moved.status_code, moved["Location"]) == (307, f"/prolific/study/{batch.public_token}/?PROLIFIC_PID=x")
    Batch.objects.filter(pk=batch.pk).update(status=BatchStatus.CLOSED)
    study = batch.external["study_id"]
    newcomer = f"/prolific/study/{batch.public_token}/?PROLIFIC_PID={REAL_PID}&STUDY_ID={study}&SESSION_ID={'d' * 24}"
    for path in (f"/prolific/study/{batch.public_token}/", newcomer, f"/prolific/study/{batch.pk}/"):
        assert Client().get(path).status_code == 404
    assert not Worker.objects.filter(kind="prolific").exists()
