"""The webhook's delivery runs in a real Celery worker: queued on commit, posted to a local receiver
that answers 500 twice, tried again by the task after a wait that doubles, delivered on the third
try with a signature the receiver checks."""

from __future__ import annotations

import hashlib
import hmac
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from hits.models import Notification, NotificationKind, WebhookDelivery
from hits.notifications import notification_record, notification_settings_update
from tests.celery_worker import running_worker, tasks_sent_to
from tests.hits.factories import make_benchmark
from tests.hits.receiver import Receiver

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

DELIVERY_SECONDS = 60


@pytest.fixture
def receiver(settings: Any) -> Iterator[Receiver]:
    """A local webhook receiver answering 500, 500, then 200, keeping each request's time, headers and body.
    It listens on 127.0.0.1: private addresses are allowed here and in the worker."""
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
    with Receiver([500, 500, 200]) as found:
        yield found


@pytest.fixture
def celery_queue(redis_url: str, tmp_path: Path) -> Iterator[str]:
    queue = f"test-webhook-{uuid.uuid4().hex[:12]}"
    environment = {"WEBHOOK_RETRY_SECONDS": "1", "WEBHOOK_MAX_ATTEMPTS": "4", "WEBHOOK_ALLOW_PRIVATE_ADDRESSES": "1"}
    with (
        tasks_sent_to(redis_url, queue),
        running_worker(redis_url=redis_url, queue=queue, log_path=tmp_path / "w.log", environment=environment),
    ):
        yield queue


def test_a_real_worker_retries_the_webhook_with_a_doubling_wait_until_it_answers(
    celery_queue: str, receiver: Receiver
) -> None:
    benchmark = make_benchmark()
    researcher = User.objects.create_user("rita", is_staff=True)
    _, secret = notification_settings_update(
        benchmark=benchmark, webhook_url=receiver.url, email_me=False, user=researcher
    )
    notification = notification_record(
        benchmark=benchmark, kind=NotificationKind.BATCH_DONE, key="batch:1", summary="batch 1 is done", data={}
    )
    assert notification is not None

    deadline = time.monotonic() + DELIVERY_SECONDS
    while time.monotonic() < deadline:
        notification.refresh_from_db()
        if notification.delivered_at is not None:
            break
        time.sleep(0.3)
    assert notification.delivered_at is not None, "the worker did not deliver the notification in time"
    assert list(WebhookDelivery.objects.order_by("attempt").values_list("attempt", "status_code")) == [
        (1, 500),
        (2, 500),
        (3, 200),
    ]
    times = receiver.times
    # Waits of one second, then two (WEBHOOK_RETRY_SECONDS doubled), give or take the worker's pace.
    assert times[1] - times[0] >= 0.9 and times[2] - times[1] >= 1.9
    for headers, body in receiver.received:
        timestamp, signature = (part.split("=", 1)[1] for part in headers["Crowdlex-Signature"].split(","))
        expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
        assert hmac.compare_digest(signature, expected)
    assert Notification.objects.get(pk=notification.pk).webhook_error == ""
