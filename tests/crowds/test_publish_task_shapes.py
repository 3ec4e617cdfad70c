"""The publish task takes a message in the shape it is queued in now, ``(batch_id, options, user_id)``,
and in the shape the release before queued, ``(batch_id, sandbox, qualifications, user_id, options)``
by position or by name: a deployment need not drain its queues to upgrade (docs/deploy.md, "Upgrading")."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from annotation.models import Activity, ActivityKind
from crowdlex.celery import app
from crowds.tasks import batch_publish_task, publish_arguments
from hits.models import Batch
from tests.celery_worker import running_worker, tasks_sent_to
from tests.crowds.crowd_helpers import SITE, make_batch, stubbed_mturk
from tests.crowds.prolific_fake import TOKEN, FakeProlific
from tests.crowds.test_prolific_backend import fake as fake

QUALIFICATIONS = {"approved_hits": None}
# How long the test waits for the worker to publish (a bound on a wait, not a speed target).
PUBLISH_WAIT_SECONDS = 60


def test_the_shape_queued_now_is_read_as_it_is() -> None:
    assert publish_arguments() == (None, None)
    assert publish_arguments({"sandbox": True}, 4) == ({"sandbox": True}, 4)
    assert publish_arguments({}, None) == ({}, None)
    assert publish_arguments(None, 4) == (None, 4)


def test_the_former_shape_by_position_puts_its_separate_options_among_the_options() -> None:
    # From the crowd page, one crowd's: the endpoint and the qualifications one by one.
    assert publish_arguments(True, QUALIFICATIONS, (4,)) == ({"sandbox": True, "qualifications": QUALIFICATIONS}, 4)
    assert publish_arguments(False, None, (4,)) == ({"sandbox": False}, 4)
    # The other crowd's: the options in the fifth place.
    assert publish_arguments(None, None, (4, {"estimated_minutes": 7})) == ({"estimated_minutes": 7}, 4)
    assert publish_arguments(None, None, (None,)) == (None, None)
    # Shorter messages of the former shape.
    assert publish_arguments(True) == ({"sandbox": True}, None)
    assert publish_arguments(None, QUALIFICATIONS) == ({"qualifications": QUALIFICATIONS}, None)


def test_the_former_shape_by_name_is_read_too() -> None:
    assert publish_arguments(None, 4, sandbox=True, qualifications=QUALIFICATIONS) == (
        {"sandbox": True, "qualifications": QUALIFICATIONS},
        4,
    )
    assert publish_arguments({"estimated_minutes": 7}, 4, sandbox=False) == (
        {"estimated_minutes": 7, "sandbox": False},
        4,
    )


def test_a_message_longer_than_either_shape_is_refused() -> None:
    with pytest.raises(TypeError, match="at most 5 arguments, not 6"):
        publish_arguments(None, None, (4, {}, "more"))


def _published_by(batch: Batch) -> Activity:
    return Activity.objects.get(benchmark=batch.benchmark, kind=ActivityKind.PUBLISHED)


def _mturk_publish_stubs(stub: Any) -> None:
    stub.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
    stub.add_response("create_hit_type", {"HITTypeId": "HT9"})
    stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "H1", "HITGroupId": "G1"}})


@pytest.mark.django_db
@pytest.mark.parametrize(
    "message",
    [
        pytest.param(lambda pk, user: {"args": [pk, True, QUALIFICATIONS, user]}, id="former-by-position"),
        pytest.param(
            lambda pk, user: {
                "args": [pk],
                "kwargs": {"sandbox": True, "qualifications": QUALIFICATIONS, "user_id": user},
            },
            id="former-by-name",
        ),
        pytest.param(
            lambda pk, user: {"args": [pk, {"sandbox": True, "qualifications": QUALIFICATIONS}, user]}, id="now"
        ),
    ],
)
def test_a_queued_message_of_either_shape_publishes_with_its_options_and_its_account(
    settings: Any, monkeypatch: Any, message: Any
) -> None:
    settings.SITE_URL = SITE
    batch = make_batch(hits=1)
    user = User.objects.create_user("rita")
    with stubbed_mturk(monkeypatch) as stub:
        _mturk_publish_stubs(stub)
        result = batch_publish_task.apply(**message(batch.pk, user.pk)).get()
    assert result["hits_created"] == 1 and result["hit_type_id"] == "HT9"
    batch.refresh_from_db()
    assert batch.qualifications == QUALIFICATIONS and batch.external["environment"] == "sandbox"
    assert _published_by(batch).actor == user


@pytest.mark.django_db
def test_a_message_of_the_former_shape_carries_the_other_crowds_options_in_fifth_place(fake: FakeProlific) -> None:
    batch = make_batch(backend="prolific", hits=1, reward="1.20")
    user = User.objects.create_user("rita")
    result = batch_publish_task.apply(
        args=[batch.pk, None, None, user.pk, {"estimated_minutes": 7, "rejection_category": "LOW_EFFORT"}]
    ).get()
    assert "error" not in result and result["hits_created"] == 1
    batch.refresh_from_db()
    assert (batch.external["estimated_minutes"], batch.external["rejection_category"]) == (7, "LOW_EFFORT")
    [study] = fake.studies.values()
    assert study["estimated_completion_time"] == 7
    assert _published_by(batch).actor == user


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_publishes_a_message_the_release_before_queued(
    fake: FakeProlific, redis_url: str, tmp_path: Path
) -> None:
    batch = make_batch(backend="prolific", hits=1, reward="1.20")
    user = User.objects.create_user("rita")
    queue = f"test-publish-{uuid.uuid4().hex[:12]}"
    environment = {"TEST_PROLIFIC_API_URL": fake.url, "PROLIFIC_API_TOKEN": TOKEN, "SITE_URL": SITE}
    with (
        tasks_sent_to(redis_url, queue),
        running_worker(redis_url=redis_url, queue=queue, log_path=tmp_path / "w.log", environment=environment),
    ):
        # By its registered name, in the former shape, as a worker of the release before queued it.
        app.send_task(
            "hits.tasks.batch_publish",
            args=[batch.pk, None, None, user.pk, {"estimated_minutes": 7, "rejection_category": "LOW_EFFORT"}],
            queue=queue,
        )
        deadline = time.monotonic() + PUBLISH_WAIT_SECONDS
        while not Activity.objects.filter(benchmark=batch.benchmark, kind=ActivityKind.PUBLISHED).exists():
            assert time.monotonic() < deadline, "the worker did not publish the batch"
            time.sleep(0.2)
    batch.refresh_from_db()
    assert (batch.external["estimated_minutes"], batch.external["rejection_category"]) == (7, "LOW_EFFORT")
    [study] = fake.studies.values()
    assert study["estimated_completion_time"] == 7
    assert _published_by(batch).actor == user
