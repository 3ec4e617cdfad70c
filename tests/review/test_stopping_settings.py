"""The stopping policy is a setting of the SWORDS scheme: the settings page and the API accept it,
refuse a policy that does not exist, and lock it once collection starts (docs/design.md §13)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Benchmark
from hits.services import benchmark_settings, hits_generate
from schemes.swords.settings import settings_of
from tests.base import Cast
from tests.hits.generation_data import build_benchmark

pytestmark = pytest.mark.django_db


@pytest.fixture
def benchmark() -> Benchmark:
    return build_benchmark("policies")


def _form(benchmark: Benchmark, **changes: object) -> dict[str, object]:
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


def test_the_settings_page_sets_a_policy_refuses_an_unknown_one_and_locks_it(
    client: Client, cast: Cast, benchmark: Benchmark
) -> None:
    client.force_login(cast.researcher)
    url = reverse("benchmark-settings", args=[benchmark.name])
    page = client.get(url).content.decode()
    assert 'name="stopping_policy"' in page and 'value="swords"' in page.split('name="stopping_policy"')[1][:200]

    refused = client.post(url, _form(benchmark, stopping_policy="greedy"))
    assert refused.status_code == 400
    block = refused.content.decode().split('id="setting-stopping_policy"')[1].split('class="setting"')[0]
    assert "must be one of swords, curtail, adaptive" in block
    assert settings_of(Benchmark.objects.get(pk=benchmark.pk)).stopping_policy == "swords"

    saved = client.post(url, _form(benchmark, stopping_policy="adaptive", adaptive_epsilon=0.01, adaptive_floor=3))
    assert saved.status_code == 302
    settings = settings_of(Benchmark.objects.get(pk=benchmark.pk))
    assert (settings.stopping_policy, settings.adaptive_epsilon, settings.adaptive_floor) == ("adaptive", 0.01, 3)

    hits_generate(benchmark=benchmark, step=2, seed=1)
    page = client.get(url).content.decode()
    assert "disabled" in page.split('name="stopping_policy"')[1].split(">")[0]
    client.post(url, _form(benchmark, stopping_policy="curtail"))
    assert settings_of(Benchmark.objects.get(pk=benchmark.pk)).stopping_policy == "adaptive"


def test_the_api_reads_sets_and_locks_the_policy(cast: Cast, benchmark: Benchmark) -> None:
    api = APIClient()
    api.force_authenticate(cast.researcher)
    url = reverse("api-benchmark-settings", args=[benchmark.name])
    read = api.get(url).json()
    assert read["scheme_settings"]["stopping_policy"] == "swords"
    assert "stopping_policy" in {field["name"] for field in read["scheme_fields"]}

    bad = api.patch(url, {"scheme_settings": {"stopping_policy": 3, "adaptive_epsilon": 0.9}}, format="json")
    assert bad.status_code == 400
    assert "must be a word" in bad.json()["stopping_policy"][0]
    assert "at most 0.5" in bad.json()["adaptive_epsilon"][0]

    changed = api.patch(url, {"scheme_settings": {"stopping_policy": "curtail"}}, format="json")
    assert changed.status_code == 200 and changed.json()["scheme_settings"]["stopping_policy"] == "curtail"

    hits_generate(benchmark=benchmark, step=2, seed=1)
    locked = api.patch(url, {"scheme_settings": {"stopping_policy": "swords"}}, format="json")
    assert locked.status_code == 400 and "locked" in locked.json()["stopping_policy"][0]
    assert "stopping_policy" in api.get(url).json()["locked"]
