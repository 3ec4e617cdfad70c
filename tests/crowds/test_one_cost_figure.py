"""The batch form's preview, the publish page and the batch page show one cost for a batch: each
priced by its crowd's one rule (``Backend.price``: rewards, the crowd's fee, bonuses sent)."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Worker
from crowds.interface import get_backend
from crowds.interface.costs import bonus_cost
from hits.models import Assignment, AssignmentStatus, Batch, Bonus, BonusStatus
from tests.base import Cast
from tests.hits.generation_data import build_benchmark

pytestmark = pytest.mark.django_db

FORM = {"step": "2", "seed": "5", "targets": "", "assignment_minutes": "30", "reward": "0.50"}


def _dollars(html: str, pattern: str) -> Decimal:
    found = re.search(pattern, html, re.S)
    assert found, f"no {pattern!r} in the page"
    return Decimal(found.group(1))


@pytest.mark.parametrize("backend", ["local", "mturk", "prolific"])
def test_the_preview_the_publish_page_and_the_batch_page_show_the_same_cost(backend: str, cast: Cast) -> None:
    benchmark = build_benchmark(f"priced-{backend}")
    client = Client()
    client.force_login(cast.researcher)
    url = reverse("batch-list", args=[benchmark.name])

    preview = client.post(url, {**FORM, "backend": backend, "preview": "1"}).content.decode()
    previewed = _dollars(preview, r'data-preview="total"><strong>\$([\d.]+)<')
    client.post(url, {**FORM, "backend": backend})
    batch = Batch.objects.get(benchmark=benchmark)
    priced = get_backend(backend).price(
        assignments_per_hit=list(batch.hits.values_list("assignments_required", flat=True)), reward=batch.reward
    )
    assert previewed == priced.total
    if backend != "local":
        assert priced.fees_total > 0, "a paid crowd takes its fee"

    page = client.get(reverse("batch-detail", args=[batch.pk])).content.decode()
    assert _dollars(page, r'data-live="batch\.cost">\$[\d.]+ / \$([\d.]+)<') == priced.total
    table = client.get(url).content.decode()
    assert _dollars(table, r'<td class="num" data-batch-cell="projected">\$([\d.]+)<') == priced.total
    if backend == "local":
        return
    crowd = client.get(reverse("batch-crowd", args=[batch.pk])).content.decode()
    assert _dollars(crowd, r"Publish \d+ HITs for \$([\d.]+)<") == priced.total
    assert _dollars(crowd, r'id="paid">\$[\d.]+ / \$([\d.]+)<') == priced.total


@pytest.mark.parametrize("backend", ["mturk", "prolific"])
def test_bonuses_sent_add_with_their_fee_to_the_batch_page_and_the_publish_page(backend: str, cast: Cast) -> None:
    benchmark = build_benchmark(f"bonus-{backend}")
    client = Client()
    client.force_login(cast.researcher)
    client.post(reverse("batch-list", args=[benchmark.name]), {**FORM, "backend": backend})
    batch = Batch.objects.get(benchmark=benchmark)
    hit = batch.hits.first()
    assert hit is not None
    worker = Worker.objects.get(user=cast.alice)
    assignment = Assignment.objects.create(
        hit=hit, worker=worker, status=AssignmentStatus.APPROVED, claimed_at=timezone.now(), deadline=timezone.now()
    )
    Bonus.objects.create(
        assignment=assignment,
        worker=worker,
        amount=Decimal("1.00"),
        reason="careful work",
        status=BonusStatus.SENT,
        token="t1",
    )
    crowd = get_backend(backend)
    priced = crowd.price(
        assignments_per_hit=list(batch.hits.values_list("assignments_required", flat=True)), reward=batch.reward
    )
    expected = priced.total + bonus_cost(Decimal("1.00"), crowd.fees)

    page = client.get(reverse("batch-detail", args=[batch.pk])).content.decode()
    assert _dollars(page, r'data-live="batch\.cost">\$[\d.]+ / \$([\d.]+)<') == expected
    publish = client.get(reverse("batch-crowd", args=[batch.pk])).content.decode()
    assert _dollars(publish, r'id="paid">\$[\d.]+ / \$([\d.]+)<') == expected
