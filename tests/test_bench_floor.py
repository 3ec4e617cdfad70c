"""The claim cycle's floor does the platform's work: a recorded cycle replayed for another annotator
claims a HIT of its own and stores that annotator's labels (bench.claim_floor, bench.floor)."""

from __future__ import annotations

import datetime
from typing import Any
from unittest import mock

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotation.models import Label, Worker, WorkerKind
from annotation.roles import ensure_groups
from bench.claim_cycle import CANDIDATES_PER_HIT, signed_in_session, step2_hits
from bench.claim_floor import record_cycle, spread_sequences
from bench.floor import psycopg2_connection, replay
from crowdlex.celery import app
from crowdlex.followup import REFRESH_TASK
from hits.models import Assignment, AssignmentStatus

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.production_database("the floor replays on PostgreSQL"),
]


def _annotators(count: int) -> tuple[list[User], list[str], list[str]]:
    _, annotators = ensure_groups()
    users = [User.objects.create(username=f"floor{i}", password="!") for i in range(count)]
    annotators.user_set.add(*users)
    for user in users:
        Worker.objects.create(kind=WorkerKind.LOCAL, external_id=user.username, user=user)
    tokens = [Token.objects.create(user=user).key for user in users]
    return users, tokens, [signed_in_session(user) for user in users]


def _database_url() -> str:
    settings = connection.settings_dict
    return (
        f"postgres://{settings['USER']}@{settings['HOST'] or '127.0.0.1'}:{settings['PORT'] or 5432}/{settings['NAME']}"
    )


def test_a_recorded_api_cycle_replayed_for_another_annotator_claims_and_labels_its_own_hit(settings: Any) -> None:
    settings.ALLOWED_HOSTS = ["127.0.0.1"]
    spread_sequences()
    step2_hits(name="floor", hits=6)
    users, tokens, sessions = _annotators(2)
    # The refresh a submit queues runs in a worker, as in the benchmark, not inline in the request.
    with mock.patch.object(app.tasks[REFRESH_TASK], "delay"):
        script = record_cycle("api", users, tokens, sessions)
    other = {key: script.clients[1][key] for key in ("user", "worker", "token", "session")}
    mapping = {script.recorded[key]: other[key] for key in other}
    assert script.recorded_at is not None
    shift = timezone.now() - script.recorded_at
    assert shift >= datetime.timedelta(0)

    floor = psycopg2_connection(_database_url())
    try:
        with floor.cursor() as cursor:
            for statement in script.prepared:
                cursor.execute(statement)
            claimed = replay(cursor, script.steps["claim"].statements, mapping=mapping, shift=shift)
        floor.commit()
        assert not claimed.short
        assignment = Assignment.objects.get(worker__user=users[1])
        assert assignment.status == AssignmentStatus.CLAIMED
        recorded = script.steps["submit"].assignment
        assert recorded is not None
        with floor.cursor() as cursor:
            submitted = replay(
                cursor,
                script.steps["submit"].statements,
                mapping={**claimed.mapping, recorded: assignment.pk},
                shift=shift,
            )
        floor.commit()
    finally:
        floor.close()

    assert not submitted.short
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.SUBMITTED
    # The replay followed its own claim (the first HIT with a slot for this annotator), not the
    # recorded annotator's third HIT, and stored this annotator's labels on it.
    assert assignment.hit_id != Assignment.objects.get(pk=recorded).hit_id
    assert Label.objects.filter(assignment=assignment, worker__user=users[1]).count() == CANDIDATES_PER_HIT


def test_the_cpu_of_the_measured_window_is_shared_by_the_parts_of_the_cycles_inside_it() -> None:
    from bench.claim_cycle import ClientStats

    stats = ClientStats(start_measuring=10.0, stop=20.0)
    stats.record(8.0, 9.0, 12.0)  # in flight when the window opened: half of it inside
    stats.record(12.0, 13.0, 16.0)  # inside
    stats.record(16.0, 17.0, 19.0)  # inside
    stats.record(19.0, 20.0, 23.0)  # in flight when it closed: a quarter inside
    stats.record(1.0, 2.0, 3.0)  # the warm-up
    stats.record(21.0, 22.0, 24.0)  # after
    assert stats.worked == pytest.approx(0.5 + 1 + 1 + 0.25)
    # The latencies are those of the whole cycles inside the window.
    assert stats.cycles == [4.0, 3.0]
