"""The batch form's cost preview (planned by the code that creates) and batch clones, on the page and the API."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Activity, ActivityKind, Benchmark
from crowds.mturk.fees import MTURK_FEES
from hits.models import Batch, BatchStatus
from hits.preview import batch_preview
from hits.services import HitsGenerationError, batch_clone, batch_close, hits_generate
from tests.base import Cast
from tests.hits.generation_data import build_benchmark

pytestmark = pytest.mark.django_db


@pytest.fixture
def benchmark() -> Benchmark:
    # 23 + 10 + 1 candidates: HITs of 8, 8, 7, 10 and 1 candidates, three assignments each.
    return build_benchmark("costs")


@pytest.fixture
def researcher(client: Client, cast: Cast) -> Client:
    client.force_login(cast.researcher)
    return client


FORM = {"step": "2", "seed": "5", "targets": "", "backend": "mturk", "assignment_minutes": "30", "reward": "0.12"}


def test_the_preview_prices_exactly_the_hits_creation_makes(benchmark: Benchmark) -> None:
    preview = batch_preview(benchmark=benchmark, step=2, seed=5, backend="mturk", reward=Decimal("0.12"))
    assert Batch.objects.count() == 0

    batch = hits_generate(benchmark=benchmark, step=2, seed=5, backend="mturk", reward=Decimal("0.12"))
    sizes = list(batch.hits.values_list("assignments_required", flat=True))
    assert preview.cost.hits == len(sizes) == 5
    assert preview.cost.assignments == sum(sizes) == 15
    assert preview.targets == 3
    assert preview.cost.rewards_total == Decimal("1.80")
    # MTurk takes 20 % of each reward, at least a cent: $0.02 on $0.12.
    assert preview.cost.fees_total == MTURK_FEES.fee(Decimal("0.12"), Decimal("0.20")) * 15 == Decimal("0.30")
    assert preview.cost.total == Decimal("2.10")
    assert preview.with_fee


def test_the_local_queue_takes_no_fee_and_hourly_pay_follows_the_measured_time(benchmark: Benchmark) -> None:
    preview = batch_preview(benchmark=benchmark, step=2, seed=5, reward=Decimal("0.10"), median_seconds=24)
    assert (preview.cost.fees_total, preview.with_fee) == (Decimal("0.00"), False)
    assert preview.cost.hourly_wage == Decimal("15.00")
    untimed = batch_preview(benchmark=benchmark, step=2, seed=5)
    assert untimed.cost.hourly_wage is None


def test_the_preview_refuses_what_creation_refuses_with_the_same_words(benchmark: Benchmark) -> None:
    hits_generate(benchmark=benchmark, step=2, seed=5)
    with pytest.raises(HitsGenerationError) as previewed:
        batch_preview(benchmark=benchmark, step=2, seed=5)
    with pytest.raises(HitsGenerationError) as created:
        hits_generate(benchmark=benchmark, step=2, seed=5)
    assert str(previewed.value) == str(created.value)
    assert "nothing needs collecting" in str(previewed.value)


def test_the_form_shows_the_preview_and_creates_nothing(researcher: Client, benchmark: Benchmark) -> None:
    response = researcher.post(reverse("batch-list", args=[benchmark.name]), {**FORM, "preview": "1"})
    page = response.content.decode()
    assert response.status_code == 200
    assert Batch.objects.count() == 0
    assert 'data-preview="hits">5<' in page
    assert 'data-preview="assignments">15<' in page
    assert "$0.30" in page and "$2.10" in page
    # The form keeps what was typed, so "Generate HITs" creates what was previewed.
    assert 'value="0.12"' in page
    created = researcher.post(reverse("batch-list", args=[benchmark.name]), FORM)
    assert created.status_code == 302
    assert Batch.objects.get().hits.count() == 5


def test_a_preview_that_cannot_be_made_says_why_on_the_form(researcher: Client, benchmark: Benchmark) -> None:
    response = researcher.post(
        reverse("batch-list", args=[benchmark.name]), {**FORM, "targets": "999999", "preview": "1"}
    )
    assert response.status_code == 200
    assert "do not exist in benchmark" in response.content.decode()
    assert Batch.objects.count() == 0


def test_the_api_previews_with_the_body_that_creates(cast: Cast, benchmark: Benchmark) -> None:
    api = APIClient()
    api.force_authenticate(cast.researcher)
    body = {"benchmark": benchmark.name, "step": 2, "seed": 5, "backend": "mturk", "reward": "0.12"}
    response = api.post(reverse("api-batch-preview"), body, format="json")
    assert response.status_code == 200, response.content
    assert (response.json()["hits"], response.json()["assignments"], response.json()["total"]) == (5, 15, "2.10")
    assert Batch.objects.count() == 0
    refused = api.post(reverse("api-batch-preview"), {**body, "targets": [999999]}, format="json")
    assert refused.status_code == 400
    assert "do not exist" in refused.json()["non_field_errors"][0]


def test_a_clone_keeps_the_settings_on_another_backend(cast: Cast, benchmark: Benchmark) -> None:
    original = hits_generate(
        benchmark=benchmark,
        step=2,
        seed=9,
        reward=Decimal("0.15"),
        assignments_per_hit=2,
        title="Judge words",
        created_by=cast.researcher,
    )
    batch_close(batch=original)
    clone = batch_clone(batch=original, backend="mturk", created_by=cast.researcher)
    assert clone.pk != original.pk
    assert (clone.step, clone.seed, clone.reward, clone.assignments_per_hit, clone.title) == (
        2,
        9,
        Decimal("0.15"),
        2,
        "Judge words",
    )
    assert clone.backend == "mturk"
    assert clone.hits.count() == original.hits.count()
    entry = Activity.objects.filter(kind=ActivityKind.BATCH_CREATED, result__batch=clone.pk).get()
    assert entry.result["cloned_from"] == original.pk
    assert f"clone of batch {original.pk}" in entry.summary


def test_a_clone_of_an_open_batch_for_its_own_targets_is_refused_unless_forced(benchmark: Benchmark) -> None:
    original = hits_generate(benchmark=benchmark, step=2, seed=9)
    target = original.hits.first().target_id  # type: ignore[union-attr]
    with pytest.raises(HitsGenerationError, match="already have step-2 HITs in an open batch"):
        batch_clone(batch=original, targets=[target])
    forced = batch_clone(batch=original, targets=[target], force=True)
    assert set(forced.hits.values_list("target_id", flat=True)) == {target}


def test_the_batch_page_clones_and_reports_refusals(researcher: Client, benchmark: Benchmark) -> None:
    original = hits_generate(benchmark=benchmark, step=2, seed=9)
    page = researcher.get(reverse("batch-detail", args=[original.pk])).content.decode()
    assert reverse("batch-clone", args=[original.pk]) in page
    assert reverse("target-list", args=[benchmark.name]) in page

    refused = researcher.post(reverse("batch-clone", args=[original.pk]), {"backend": "local"}, follow=True)
    assert "No clone made" in refused.content.decode()
    assert Batch.objects.count() == 1

    batch_close(batch=original)
    made = researcher.post(reverse("batch-clone", args=[original.pk]), {"backend": "mturk"})
    clone = Batch.objects.exclude(pk=original.pk).get()
    assert made["Location"] == reverse("batch-detail", args=[clone.pk])
    assert (clone.backend, clone.status) == ("mturk", BatchStatus.OPEN)


def test_the_api_clones_a_batch(cast: Cast, benchmark: Benchmark) -> None:
    original = hits_generate(benchmark=benchmark, step=2, seed=9)
    targets = sorted(set(original.hits.values_list("target_id", flat=True)))[:1]
    api = APIClient()
    api.force_authenticate(cast.researcher)
    refused = api.post(reverse("api-batch-clone", args=[original.pk]), {"targets": targets}, format="json")
    assert refused.status_code == 400
    made = api.post(reverse("api-batch-clone", args=[original.pk]), {"targets": targets, "force": True}, format="json")
    assert made.status_code == 201, made.content
    assert made.json()["seed"] == 9 and made.json()["progress"]["hits_total"] >= 1
