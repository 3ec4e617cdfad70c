"""Money and crowd actions ask first, with what they spend and whom they touch: publish, approve,
reject, a bonus, a crowd block and expiring every HIT. Asking calls no crowd and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from hits.models import Batch, BatchStatus, Bonus, RemoteHIT
from tests.base import PASSWORD, Cast
from tests.crowds.crowd_helpers import (
    SITE,
    make_batch,
    mturk_worker,
    publish_locally,
    stubbed_mturk,
    submitted_assignment,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher(cast: Cast, settings: Any) -> Client:
    settings.SITE_URL = SITE
    client = Client()
    assert client.login(username="rita", password=PASSWORD)
    return client


def test_publishing_asks_with_the_hits_and_the_dollars_and_calls_no_crowd(researcher: Client, monkeypatch: Any) -> None:
    batch = make_batch(hits=3)
    with stubbed_mturk(monkeypatch) as stub:  # no response stubbed: any call would fail the test
        asked = researcher.post(f"/batches/{batch.pk}/crowd/publish/", {"environment": "sandbox"})
        stub.assert_no_pending_responses()
    html = asked.content.decode()
    assert asked.status_code == 200 and f"Publish batch {batch.pk} on MTurk&#x27;s sandbox?" in html
    assert "publish 3 HITs" in html and "(9 assignments)" in html
    assert "spend up to $1.08: $0.90 in rewards and $0.18 in MTurk&#x27;s fees" in html
    assert 'name="environment" value="sandbox"' in html and 'name="confirmed" value="yes"' in html
    assert not RemoteHIT.objects.exists()


def test_approving_rejecting_paying_and_blocking_ask_first(researcher: Client, monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    (posting,) = publish_locally(batch)
    good = submitted_assignment(posting.hit, mturk_worker("W1"), external_id="A1", external_status="Submitted")
    bad = submitted_assignment(posting.hit, mturk_worker("W2"), external_id="A2", external_status="Submitted")
    with stubbed_mturk(monkeypatch) as stub:
        approve = researcher.post(f"/assignments/{good.pk}/approve/").content.decode()
        reject = researcher.post(f"/assignments/{bad.pk}/reject/").content.decode()
        bonus = researcher.post(
            f"/assignments/{good.pk}/bonus/", {"amount": "0.30", "reason": "Great"}
        ).content.decode()
        block = researcher.post(f"/workers/{bad.worker_id}/crowd-block/", {"reason": "Random"}).content.decode()
        expire = researcher.post(f"/batches/{batch.pk}/crowd/expire/").content.decode()
        stub.assert_no_pending_responses()
    assert "pay them the reward of $0.10 ($0.12 with the crowd" in approve and "Approve and pay $0.10" in approve
    assert "they are not paid its reward of $0.10" in reject
    assert "a bonus of $0.30 ($0.36 with the fee)" in bonus
    assert "Block W2?" in block and "(1 submitted assignments)" in block
    assert f"expire the 1 postings of batch {batch.pk}&#x27;s 1 HITs" in expire
    good.refresh_from_db()
    bad.refresh_from_db()
    batch.refresh_from_db()
    assert (good.status, bad.status) == ("submitted", "submitted")
    assert not Bonus.objects.exists() and not bad.worker.blocked
    assert Batch.objects.get(pk=batch.pk).status != BatchStatus.CLOSED
