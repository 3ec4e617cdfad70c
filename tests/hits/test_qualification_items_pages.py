"""The qualification test's researcher page shows its gold items a page at a time, so a test built
from a whole benchmark (thousands of items) makes a small page; the figures of each item still count
every attempt."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from annotation.models import Benchmark, Worker
from hits.qualification import qualification_build
from hits.qualification.views import ITEMS_PER_PAGE
from tests.base import Cast
from tests.hits.qualification_data import gold_items, take

pytestmark = pytest.mark.django_db


def _rows(page: str) -> list[tuple[int, int]]:
    """(position, times shown) of each gold item on the page."""
    table = page.split('id="qualification-items"')[1].split("</table>")[0]
    return [
        (int(position), int(shown))
        for position, shown in re.findall(
            r'<tr>\s*<td class="num">(\d+)</td>.*?<td class="num">(\d+)</td>\s*<td class="num">[^<]*</td>\s*</tr>',
            table,
            re.S,
        )
    ]


def test_the_gold_items_are_paginated_and_each_page_counts_every_attempt(cast: Cast) -> None:
    benchmark = Benchmark.objects.create(name="gold-pages")
    count = ITEMS_PER_PAGE * 2 + 7
    items = gold_items(accepts=count // 2, rejects=count - count // 2)
    test = qualification_build(benchmark=benchmark, items=items, length=count, pass_mark=0.5)
    take(test, Worker.objects.get(user=cast.alice))
    client = Client()
    client.force_login(cast.researcher)
    url = f"/benchmarks/{benchmark.name}/qualification/"

    first = client.get(url).content.decode()
    assert [position for position, _ in _rows(first)] == list(range(1, ITEMS_PER_PAGE + 1))
    assert {shown for _, shown in _rows(first)} == {1}, "every item was shown in the one attempt of the whole test"
    assert "page 1 of 3" in first and f"Items 1\u2013{ITEMS_PER_PAGE} of {count}" in first
    last = client.get(url, {"page": 3}).content.decode()
    assert [position for position, _ in _rows(last)] == list(range(2 * ITEMS_PER_PAGE + 1, count + 1))
    assert {shown for _, shown in _rows(last)} == {1}
