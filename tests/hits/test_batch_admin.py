"""Admin actions on batches call the same services as the pages."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from hits.models import Batch, BatchStatus
from hits.services import hits_generate
from tests.hits.generation_data import build_benchmark

pytestmark = pytest.mark.django_db


def test_the_admin_closes_and_reopens_batches(client: Client) -> None:
    client.force_login(User.objects.create_superuser("root", password="x"))
    first = hits_generate(benchmark=build_benchmark("one"), step=2, seed=1)
    second = hits_generate(benchmark=build_benchmark("two"), step=2, seed=1)
    url = reverse("admin:hits_batch_changelist")
    response = client.post(url, {"action": "close_batches", "_selected_action": [first.pk, second.pk]}, follow=True)
    assert "2 batch(es) closed." in response.content.decode()
    assert set(Batch.objects.values_list("status", flat=True)) == {BatchStatus.CLOSED}
    hits_generate(benchmark=second.benchmark, step=2, seed=2)
    response = client.post(url, {"action": "reopen_batches", "_selected_action": [first.pk, second.pk]}, follow=True)
    page = response.content.decode()
    assert "1 batch(es) reopened." in page
    assert f"Batch {second.pk} cannot reopen" in page  # the admin capitalises messages
    assert Batch.objects.get(pk=first.pk).status == BatchStatus.OPEN


def test_closing_a_closed_batch_is_not_counted(client: Client) -> None:
    client.force_login(User.objects.create_superuser("root", password="x"))
    batch = hits_generate(benchmark=build_benchmark("one"), step=2, seed=1)
    url = reverse("admin:hits_batch_changelist")
    client.post(url, {"action": "close_batches", "_selected_action": [batch.pk]}, follow=True)

    response = client.post(url, {"action": "close_batches", "_selected_action": [batch.pk]}, follow=True)

    said = [(message.level_tag, str(message)) for message in response.context["messages"]]
    assert said == [("warning", "0 batch(es) closed."), ("warning", "1 left as they were: already closed.")]
    response = client.post(url, {"action": "reopen_batches", "_selected_action": [batch.pk]}, follow=True)
    response = client.post(url, {"action": "reopen_batches", "_selected_action": [batch.pk]}, follow=True)
    said = [(message.level_tag, str(message)) for message in response.context["messages"]]
    assert said == [("warning", "0 batch(es) reopened."), ("warning", "1 left as they were: not closed.")]
