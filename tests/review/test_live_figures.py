"""The live figures read as the pages print them: a refresh of an unchanged page changes nothing."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.base import Cast
from tests.review.builders import honest, make_benchmark, simulated, step2_batch, work_once

pytestmark = pytest.mark.django_db


def _printed(html: str) -> dict[str, str]:
    """Each data-live element's text as the page printed it (elements without nested tags)."""
    return {key: text.strip() for key, text in re.findall(r'data-live="([^"]+)"[^>]*>([^<]*)<', html)}


@pytest.mark.parametrize("page", ["benchmark-detail", "pipeline-progress", "pipeline-workers", "batch-detail"])
def test_every_live_figure_of_a_page_matches_what_it_printed(cast: Cast, page: str) -> None:
    benchmark = make_benchmark(targets=2, candidates=8)
    batch = step2_batch(benchmark)
    work_once(simulated("ann"), benchmark, honest())
    client = Client()
    client.force_login(cast.researcher)
    url = (
        f"/batches/{batch.pk}/"
        if page == "batch-detail"
        else {
            "benchmark-detail": f"/benchmarks/{benchmark.name}/",
            "pipeline-progress": f"/benchmarks/{benchmark.name}/pipeline/",
            "pipeline-workers": f"/benchmarks/{benchmark.name}/flagged-workers/",
        }[page]
    )
    html = client.get(url).content.decode()
    live_url = re.search(r'data-live-url="([^"]+)"', html).group(1)  # type: ignore[union-attr]

    printed = _printed(html)
    figures = client.get(live_url).json()["figures"]

    assert printed, "the page names live figures"
    assert {key: figures[key] for key in printed} == printed
