"""A benchmark's settings on the researcher's page and the API: checked by their own types, errors per
field, and locked once collection started where they shape the work collected."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Activity, ActivityKind, Benchmark
from hits.services import benchmark_settings, benchmark_settings_update, hits_generate
from review.models import ReviewSettings
from tests.base import Cast
from tests.hits.generation_data import build_benchmark

pytestmark = pytest.mark.django_db


@pytest.fixture
def benchmark() -> Benchmark:
    return build_benchmark("tuned")


@pytest.fixture
def researcher(client: Client, cast: Cast) -> Client:
    client.force_login(cast.researcher)
    return client


def _collection_form(benchmark: Benchmark, **changes: object) -> dict[str, object]:
    state = benchmark_settings(benchmark=benchmark)
    form: dict[str, object] = {
        "section": "collection",
        "reward": str(state.reward),
        "seed": state.seed,
        **{name: value for name, value in state.scheme_settings.items() if not isinstance(value, bool)},
    }
    if state.distinct_workers_per_candidate:
        form["distinct_workers_per_candidate"] = "on"
    form.update(changes)
    return form


def test_before_collection_every_setting_changes_and_the_log_says_so(
    researcher: Client, cast: Cast, benchmark: Benchmark
) -> None:
    url = reverse("benchmark-settings", args=[benchmark.name])
    page = researcher.get(url).content.decode()
    assert "Labels in step 2 (labels)" in page and "Nothing has been collected yet" in page

    response = researcher.post(url, _collection_form(benchmark, step2_labels=4, reward="0.15", seed=7))
    assert response.status_code == 302
    benchmark.refresh_from_db()
    assert benchmark.scheme_settings["step2_labels"] == 4
    assert (benchmark.reward, benchmark.seed) == (Decimal("0.15"), 7)
    entry = Activity.objects.get(kind=ActivityKind.SETTING_CHANGED)
    assert entry.actor == cast.researcher
    assert entry.result["changed"]["step2_labels"] == ["3", "4"]
    assert "reward 0.10 → 0.15" in entry.summary
    # The next batch collects four labels per candidate.
    assert hits_generate(benchmark=benchmark, step=2, seed=1).assignments_per_hit == 4


def test_a_bad_value_is_shown_under_its_field_and_nothing_is_saved(researcher: Client, benchmark: Benchmark) -> None:
    url = reverse("benchmark-settings", args=[benchmark.name])
    response = researcher.post(url, _collection_form(benchmark, candidates_per_hit=11, min_control_accuracy=1.5))
    page = response.content.decode()
    assert response.status_code == 400
    assert "must be at most 10" in page and "must be at most 1.0" in page
    # Each message sits in its own setting's block.
    block = page.split('id="setting-candidates_per_hit"')[1].split('class="setting"')[0]
    assert "must be at most 10" in block and "1.0" not in block
    benchmark.refresh_from_db()
    assert benchmark.scheme_settings == {}
    assert not Activity.objects.filter(kind=ActivityKind.SETTING_CHANGED).exists()


def test_once_a_batch_exists_the_settings_that_shape_it_are_locked_and_the_reward_is_not(
    researcher: Client, benchmark: Benchmark
) -> None:
    batch = hits_generate(benchmark=benchmark, step=2, seed=1)
    url = reverse("benchmark-settings", args=[benchmark.name])
    page = researcher.get(url).content.decode()
    assert f"batch {batch.pk} exists" in page and "start a new benchmark" in page
    assert 'name="step2_labels"' in page and "disabled" in page.split('name="step2_labels"')[1].split(">")[0]

    with pytest.raises(ValidationError) as refused:
        benchmark_settings_update(benchmark=benchmark, scheme_settings={"step2_labels": 5}, seed=3)
    assert set(refused.value.message_dict) == {"step2_labels", "seed"}
    assert "is locked: collection has started" in refused.value.message_dict["step2_labels"][0]
    # The same value is no change, and the reward shapes only batches to come.
    state = benchmark_settings_update(benchmark=benchmark, scheme_settings={"step2_labels": 3}, reward="0.20")
    assert state.reward == Decimal("0.20") and state.scheme_settings["step2_labels"] == 3
    # A post of a disabled field cannot change it either.
    response = researcher.post(url, _collection_form(benchmark, step2_labels=6, reward="0.25"))
    assert response.status_code == 302
    benchmark.refresh_from_db()
    assert benchmark.reward == Decimal("0.25") and "step2_labels" not in benchmark.scheme_settings


def test_review_settings_stay_editable_with_errors_per_field(researcher: Client, benchmark: Benchmark) -> None:
    hits_generate(benchmark=benchmark, step=2, seed=1)
    url = reverse("benchmark-settings", args=[benchmark.name])
    saved = researcher.post(url, {"section": "review", "auto_block_spammers": "on", "fast_factor": "5"})
    assert saved.status_code == 302
    settings = ReviewSettings.objects.get(benchmark=benchmark)
    assert settings.auto_block_spammers and settings.signal_overrides == {"fast_factor": 5.0}
    assert Activity.objects.filter(kind=ActivityKind.SETTING_CHANGED, summary__contains="review settings").exists()
    refused = researcher.post(url, {"section": "review", "fast_factor": "-1"})
    assert refused.status_code == 400
    block = refused.content.decode().split('id="setting-fast_factor"')[1].split('class="setting"')[0]
    assert "greater than or equal to 0" in block


def test_the_api_reads_and_changes_settings_through_the_same_checks(cast: Cast, benchmark: Benchmark) -> None:
    api = APIClient()
    api.force_authenticate(cast.researcher)
    url = reverse("api-benchmark-settings", args=[benchmark.name])
    read = api.get(url).json()
    assert read["scheme_settings"]["candidates_per_hit"] == 10 and read["locked"] == []

    changed = api.patch(url, {"scheme_settings": {"step3_labels": 5}, "reward": "0.11"}, format="json")
    assert changed.status_code == 200, changed.content
    assert changed.json()["scheme_settings"]["step3_labels"] == 5 and changed.json()["reward"] == "0.11"

    bad = api.patch(url, {"scheme_settings": {"step3_labels": "many", "colour": 1}, "seed": -1}, format="json")
    assert bad.status_code == 400
    assert set(bad.json()) >= {"step3_labels", "colour", "seed"}

    hits_generate(benchmark=benchmark, step=2, seed=1)
    locked = api.patch(url, {"scheme_settings": {"step3_labels": 6}}, format="json")
    assert locked.status_code == 400 and "locked" in locked.json()["step3_labels"][0]
    assert "step3_labels" in api.get(url).json()["locked"]
