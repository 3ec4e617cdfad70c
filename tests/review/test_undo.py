"""Destructive actions ask first, with their figures, and the reversible ones are undone from the
activity log, which records the undo (docs/design.md §11)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Activity, ActivityKind, Candidate, CandidateStage, Worker
from hits.models import HIT, Assignment, AssignmentStatus, Batch, BatchStatus
from hits.services import batch_close, candidate_exclude
from review.services import UndoRefused, activity_undo
from tests.base import Cast
from tests.hits.factories import make_benchmark, make_hits

pytestmark = pytest.mark.django_db


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def submitted(user: User, hit: HIT) -> Assignment:
    now = timezone.now()
    return Assignment.objects.create(
        hit=hit,
        worker=Worker.objects.get(user=user),
        status=AssignmentStatus.SUBMITTED,
        claimed_at=now - timedelta(minutes=5),
        deadline=now + timedelta(minutes=25),
        submitted_at=now,
    )


def entry(kind: str) -> Activity:
    return Activity.objects.filter(kind=kind).latest("id")


def test_closing_a_batch_asks_with_its_figures_and_is_undone_from_the_log(cast: Cast) -> None:
    benchmark = make_benchmark("closing")
    hits = make_hits(benchmark, 4, assignments_per_hit=3)
    batch = hits[0].batch
    submitted(cast.alice, hits[0])
    page = signed_in(cast.researcher)

    asked = page.post(reverse("batch-close", args=[batch.pk]))
    html = asked.content.decode()
    assert asked.status_code == 200 and f"Close batch {batch.pk}?" in html
    assert "stop offering its 4 HITs: 11 of its 12 assignments are still to collect" in html
    assert "its 1 workers (1 submitted assignments)" in html
    batch.refresh_from_db()
    assert batch.status == BatchStatus.OPEN  # asking changed nothing

    page.post(reverse("batch-close", args=[batch.pk]), {"confirmed": "yes"})
    batch.refresh_from_db()
    assert batch.status == BatchStatus.CLOSED
    closed = entry(ActivityKind.BATCH_CLOSED)
    log = page.get(reverse("benchmark-activity", args=[benchmark.name])).content.decode()
    assert reverse("activity-undo", args=[benchmark.name, closed.pk]) in log

    undo_url = reverse("activity-undo", args=[benchmark.name, closed.pk])
    asked_undo = page.post(undo_url).content.decode()
    assert f"Reopen batch {batch.pk}?" in asked_undo
    batch.refresh_from_db()
    assert batch.status == BatchStatus.CLOSED
    page.post(undo_url, {"confirmed": "yes"})
    batch.refresh_from_db()
    assert batch.status == BatchStatus.OPEN
    reopened = entry(ActivityKind.BATCH_REOPENED)
    assert reopened.actor_name == "rita" and reopened.result == {"batch": batch.pk}
    # Undone once: a second undo is refused and changes nothing.
    with pytest.raises(UndoRefused):
        activity_undo(activity=closed)
    assert Activity.objects.filter(kind=ActivityKind.BATCH_REOPENED).count() == 1


def test_an_excluded_candidate_comes_back_at_the_stage_it_had(cast: Cast) -> None:
    benchmark = make_benchmark("excluding")
    hit = make_hits(benchmark, 1)[0]
    candidate = Candidate.objects.filter(target=hit.target).order_by("id").first()
    assert candidate is not None
    Candidate.objects.filter(pk=candidate.pk).update(stage=CandidateStage.SCORE)
    page = signed_in(cast.researcher)
    asked = page.post(reverse("candidate-exclude", args=[candidate.pk])).content.decode()
    assert f"Exclude “{candidate.text}”?" in asked and "1 HITs of open batches hold it" in asked
    candidate.refresh_from_db()
    assert candidate.stage == CandidateStage.SCORE

    page.post(reverse("candidate-exclude", args=[candidate.pk]), {"confirmed": "yes"})
    candidate.refresh_from_db()
    assert candidate.stage == CandidateStage.EXCLUDED
    excluded = entry(ActivityKind.CANDIDATE_EXCLUDED)
    assert excluded.result["stage"] == CandidateStage.SCORE
    page.post(reverse("activity-undo", args=[benchmark.name, excluded.pk]), {"confirmed": "yes"})
    candidate.refresh_from_db()
    assert candidate.stage == CandidateStage.SCORE
    assert entry(ActivityKind.CANDIDATE_INCLUDED).result["candidate"] == candidate.pk
    assert candidate_exclude(candidate=candidate)  # and it can be excluded again


def test_a_block_asks_with_the_workers_figures_and_is_undone_from_the_log(cast: Cast) -> None:
    benchmark = make_benchmark("blocking")
    hits = make_hits(benchmark, 2)
    submitted(cast.spammer, hits[0])
    submitted(cast.spammer, hits[1])
    worker = Worker.objects.get(user=cast.spammer)
    page = signed_in(cast.researcher)
    url = reverse("pipeline-worker-block", args=[benchmark.name, worker.pk])
    asked = page.post(url, {"reason": "random clicks"}).content.decode()
    assert "Block sam?" in asked and "1 benchmarks they worked in" in asked and "2 submitted assignments" in asked
    assert 'name="reason" value="random clicks"' in asked  # carried into the confirmation
    worker.refresh_from_db()
    assert not worker.blocked

    page.post(url, {"reason": "random clicks", "confirmed": "yes"})
    worker.refresh_from_db()
    assert worker.blocked and "random clicks" in worker.blocked_reason
    blocked = entry(ActivityKind.BLOCKED)
    page.post(reverse("activity-undo", args=[benchmark.name, blocked.pk]), {"confirmed": "yes"})
    worker.refresh_from_db()
    assert not worker.blocked
    assert entry(ActivityKind.UNBLOCKED).actor_name == "rita"


def test_an_entry_of_another_kind_is_not_undone_and_a_viewer_may_not_undo(cast: Cast) -> None:
    benchmark = make_benchmark("other")
    batch = make_hits(benchmark, 1)[0].batch
    batch_close(batch=batch)
    Batch.objects.filter(pk=batch.pk).update(status=BatchStatus.OPEN)
    closed = entry(ActivityKind.BATCH_CLOSED)
    with pytest.raises(UndoRefused, match="open already"):
        activity_undo(activity=closed)
    created = Activity.objects.create(benchmark=benchmark, kind=ActivityKind.EXPORTED, summary="x")
    page = signed_in(cast.researcher)
    answer = page.post(reverse("activity-undo", args=[benchmark.name, created.pk]), {"confirmed": "yes"}, follow=True)
    assert "cannot be undone from the log" in answer.content.decode()
    assert signed_in(cast.alice).post(reverse("activity-undo", args=[benchmark.name, closed.pk])).status_code == 403


def test_only_an_editor_sees_the_undo_buttons(cast: Cast) -> None:
    from annotation.access import access_grant
    from annotation.models import Role
    from tests.base import make_user

    benchmark = make_benchmark("owned")
    access_grant(benchmark=benchmark, user=cast.researcher, role=Role.OWNER, by=None)
    viewer = make_user("vic", researcher=True)
    access_grant(benchmark=benchmark, user=viewer, role=Role.VIEWER, by=cast.researcher)
    batch_close(batch=make_hits(benchmark, 1)[0].batch, by=cast.researcher)
    undo = reverse("activity-undo", args=[benchmark.name, entry(ActivityKind.BATCH_CLOSED).pk])
    for url in (
        reverse("benchmark-activity", args=[benchmark.name]),
        reverse("benchmark-detail", args=[benchmark.name]),
    ):
        assert undo in signed_in(cast.researcher).get(url).content.decode()
        assert undo not in signed_in(viewer).get(url).content.decode()
    assert signed_in(viewer).post(undo, {"confirmed": "yes"}).status_code == 403
