"""Each crowd's publish page speaks of its own crowd: the Prolific page never of MTurk, HITs or a
requester site."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.test import Client

from annotation.models import Benchmark
from hits.models import Batch
from hits.services import hits_generate
from tests.base import Cast
from tests.hits.generation_data import build_benchmark

pytestmark = pytest.mark.django_db


def _text(page: str) -> str:
    """The words a reader sees: the page without its tags, scripts and attribute values."""
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body))


@pytest.mark.parametrize(("backend", "other"), [("prolific", "MTurk"), ("mturk", "Prolific")])
def test_a_crowd_page_names_only_its_own_crowd(backend: str, other: str, cast: Cast) -> None:
    benchmark: Benchmark = build_benchmark(f"words-{backend}")
    batch: Batch = hits_generate(benchmark=benchmark, step=2, seed=1, backend=backend, reward=Decimal("0.40"))
    client = Client()
    client.force_login(cast.researcher)
    words = _text(client.get(f"/batches/{batch.pk}/crowd/").content.decode())
    name = "Prolific" if backend == "prolific" else "MTurk"
    assert name in words
    assert re.findall(rf".{{0,60}}\b{other}\b.{{0,60}}", words) == []
