"""Pausing and resuming a batch on each crowd: no new HIT is handed out while paused (the local
queue's claim and projects, a new MTurk visit, a new Prolific participant), the crowd is told
(MTurk: expiry moved to now and back; Prolific: the study paused and started), work already taken
can still be submitted, resuming restores everything, and the log and undo follow."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from annotation.models import Activity, ActivityKind, Worker
from crowds.mturk.client import EXPIRE_NOW
from crowds.services import CrowdActionRefused, assignment_accept_remote, batch_pause, batch_publish, batch_resume
from hits.models import HIT, AssignmentStatus, Batch, RemoteHIT
from hits.selectors import work_projects
from hits.services import assignment_claim_next, assignment_submit, batch_close
from review.services.undo import activity_undo
from tests.base import Cast, make_cast
from tests.crowds.crowd_helpers import make_batch, publish_locally, stubbed_mturk
from tests.crowds.prolific_fake import FakeProlific, fake_prolific
from tests.hits.factories import honest_answers, make_benchmark, make_hits

pytestmark = pytest.mark.django_db

SITE = "https://crowdlex.example.org"


@pytest.fixture
def cast() -> Cast:
    return make_cast()


def test_a_paused_local_batch_hands_out_nothing_and_its_holders_still_submit(cast: Cast) -> None:
    benchmark = make_benchmark()
    hits = make_hits(benchmark, 3)
    batch = hits[0].batch
    alice, bob = Worker.objects.get(user=cast.alice), Worker.objects.get(user=cast.bob)
    held = assignment_claim_next(worker=alice, batch=batch)
    assert held is not None

    assert batch_pause(batch=batch, by=cast.researcher) is True
    assert batch_pause(batch=batch, by=cast.researcher) is False  # a double click pauses once
    assert assignment_claim_next(worker=bob, batch=batch) is None
    assert assignment_claim_next(worker=bob) is None
    assert [project.batch_id for project in work_projects(worker=bob)] == []

    submitted = assignment_submit(assignment=held, answers=honest_answers(held.hit), worker=alice)
    assert submitted.status == AssignmentStatus.SUBMITTED

    assert batch_resume(batch=batch, by=cast.researcher) is True
    assert [(project.batch_id, project.hits_left) for project in work_projects(worker=bob)] == [(batch.pk, 3)]
    assert assignment_claim_next(worker=bob, batch=batch) is not None
    kinds = list(Activity.objects.filter(benchmark=benchmark).values_list("kind", flat=True).order_by("id"))
    assert kinds == [ActivityKind.BATCH_PAUSED, ActivityKind.BATCH_RESUMED]


def test_the_projects_count_and_the_claim_agree_on_a_paused_batch_among_open_ones(cast: Cast) -> None:
    benchmark = make_benchmark()
    paused = make_hits(benchmark, 2)[0].batch
    running = make_hits(benchmark, 3)[0].batch
    batch_pause(batch=paused)
    bob = Worker.objects.get(user=cast.bob)
    counted = {project.batch_id: project.hits_left for project in work_projects(worker=bob)}
    handed = []
    while (assignment := assignment_claim_next(worker=bob)) is not None:
        handed.append(assignment.hit.batch_id)
        assignment_submit(assignment=assignment, answers=honest_answers(assignment.hit), worker=bob)
    assert counted == {running.pk: 3}
    assert handed == [running.pk] * 3


def test_a_closed_batch_cannot_be_paused_and_undo_resumes_a_paused_one(cast: Cast) -> None:
    benchmark = make_benchmark()
    closed = make_hits(benchmark, 1)[0].batch
    batch_close(batch=closed)
    with pytest.raises(CrowdActionRefused, match="is closed"):
        batch_pause(batch=closed)
    batch = make_hits(benchmark, 1)[0].batch
    batch_pause(batch=batch, by=cast.researcher)
    entry = Activity.objects.get(kind=ActivityKind.BATCH_PAUSED)
    assert activity_undo(activity=entry, by=cast.researcher) == f"Batch {batch.pk} hands out its HITs again."
    batch.refresh_from_db()
    assert batch.paused_at is None
    assert assignment_claim_next(worker=Worker.objects.get(user=cast.bob), batch=batch) is not None


def test_pausing_on_mturk_expires_the_live_hits_and_resuming_gives_back_their_time(
    monkeypatch: Any, settings: Any
) -> None:
    settings.SITE_URL = SITE
    batch = make_batch(hits=2, lifetime=timedelta(days=7))
    postings = publish_locally(batch)
    batch.external = {**batch.external, "published_at": timezone.now().isoformat()}
    batch.save(update_fields=["external"])
    # A worker accepted the first HIT just before the pause.
    holder = assignment_accept_remote(hit=postings[0].hit, worker_external_id="W1", assignment_external_id="A1")
    with stubbed_mturk(monkeypatch) as stub:
        for posting in postings:
            stub.add_response("update_expiration_for_hit", {}, {"HITId": posting.external_id, "ExpireAt": EXPIRE_NOW})
        assert batch_pause(batch=batch) is True
    # Expired for the pause, not for good: nothing records them as expired.
    assert not RemoteHIT.objects.filter(expired_at__isnull=False).exists()
    with pytest.raises(CrowdActionRefused, match="paused"):
        assignment_accept_remote(
            hit=HIT.objects.get(pk=postings[1].hit_id), worker_external_id="W2", assignment_external_id="A2"
        )
    # The worker who holds one reloads it and may still submit.
    again = assignment_accept_remote(hit=postings[0].hit, worker_external_id="W1", assignment_external_id="A1")
    assert again.pk == holder.pk

    with stubbed_mturk(monkeypatch) as stub:
        # Each live posting gets its expiry back (the exact time is the next test's).
        for _ in postings:
            stub.add_response("update_expiration_for_hit", {}, None)
        assert batch_resume(batch=batch) is True
    assert assignment_accept_remote(
        hit=HIT.objects.get(pk=postings[1].hit_id), worker_external_id="W2", assignment_external_id="A2"
    )


def test_resuming_on_mturk_sends_each_posting_its_remaining_lifetime(monkeypatch: Any, settings: Any) -> None:
    settings.SITE_URL = SITE
    batch = make_batch(hits=1, lifetime=timedelta(days=7))
    (posting,) = publish_locally(batch)
    batch.external = {**batch.external, "published_at": timezone.now().isoformat()}
    batch.save(update_fields=["external"])
    # Posted two days before a pause of three hours: five days were left when it was paused.
    RemoteHIT.objects.filter(pk=posting.pk).update(created_at=timezone.now() - timedelta(days=2, hours=3))
    Batch.objects.filter(pk=batch.pk).update(paused_at=timezone.now() - timedelta(hours=3))
    sent: list[dict[str, Any]] = []

    def record(**params: Any) -> dict[str, Any]:
        sent.append(params)
        return {}

    from crowds.mturk.backend import MTurkBackend

    monkeypatch.setattr(
        MTurkBackend, "call", lambda self, environment, operation, **params: record(operation=operation, **params)
    )
    started = timezone.now()
    assert batch_resume(batch=batch) is True
    assert [entry["operation"] for entry in sent] == ["update_expiration_for_hit"]
    assert sent[0]["HITId"] == posting.external_id
    remaining = sent[0]["ExpireAt"] - started
    assert timedelta(days=5) - timedelta(minutes=1) <= remaining <= timedelta(days=5) + timedelta(minutes=1)


@pytest.fixture
def fake(settings: Any) -> Any:
    settings.SITE_URL = SITE
    with fake_prolific(settings) as running:
        yield running


def test_pausing_on_prolific_pauses_the_study_and_lets_a_started_participant_finish(fake: FakeProlific) -> None:
    batch = make_batch(backend="prolific", hits=2, reward="0.20")
    # Paused before it was published, it is not published until resumed.
    batch_pause(batch=batch)
    with pytest.raises(CrowdActionRefused, match="is paused: resume it to publish"):
        batch_publish(batch=batch, options={"estimated_minutes": 1})
    assert fake.studies == {}
    batch_resume(batch=batch)
    batch_publish(batch=batch, options={"estimated_minutes": 1})
    batch.refresh_from_db()
    study = batch.external["study_id"]
    session, path = fake.take_place(study, "P1")
    client = Client()
    assert client.get(path).status_code == 200

    assert batch_pause(batch=batch) is True
    assert fake.studies[study]["status"] == "PAUSED"
    # Prolific lets no one new in; were a link opened anyway, the page refuses a newcomer.
    with pytest.raises(Exception, match="PAUSED"):
        fake.take_place(study, "P2")
    refused = Client().get(path.replace("P1", "P3").replace(session, "S3"))
    assert refused.status_code == 409
    assert b"paused" in refused.content
    # The participant who started reloads their page and may still complete it.
    assert client.get(path).status_code == 200

    assert batch_resume(batch=batch) is True
    assert fake.studies[study]["status"] == "ACTIVE"
    fake.take_place(study, "P2")
