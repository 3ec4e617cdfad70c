"""A batch's page keeps each row of its HITs as shown, by what the row shows (``hits.rows.batch_hit_rows``,
docs/design.md §7 "Table rows"): after a submit only the rows it moved are built again, the page shows
what a page built with nothing kept shows, and at most ``BATCH_HIT_ROWS_KEPT`` rows are kept."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from hits import rows as rows_module
from hits import selectors
from hits.models import HIT, Batch
from hits.rows import batch_hit_rows
from tests.base import Cast
from tests.review.builders import honest, make_benchmark, simulated, step2_batch, work_once

pytestmark = pytest.mark.django_db


class Counted:
    """``hits.rows.rows`` counting the rows it builds."""

    def __init__(self) -> None:
        self.built = 0
        self.real = rows_module.rows

    def __call__(self, row_html: str, values: Any) -> Any:
        values = list(values)
        self.built += len(values)
        return self.real(row_html, values)


def _page(batch: Batch) -> str:
    page = selectors.batch_hits_page(batch=batch, number=None, per_page=100)
    return str(batch_hit_rows(page.object_list))


def _fresh(batch: Batch) -> str:
    """The rows built with nothing kept."""
    kept = dict(rows_module._HIT_ROWS_SHOWN)
    rows_module._HIT_ROWS_SHOWN.clear()
    try:
        return _page(batch)
    finally:
        rows_module._HIT_ROWS_SHOWN.clear()
        rows_module._HIT_ROWS_SHOWN.update(kept)


def test_after_a_submit_only_the_rows_it_moved_are_built_and_the_page_shows_a_fresh_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rows_module, "_HIT_ROWS_SHOWN", {})
    counted = Counted()
    monkeypatch.setattr(rows_module, "rows", counted)
    benchmark = make_benchmark(targets=4, candidates=8)
    batch = step2_batch(benchmark)
    hits = HIT.objects.filter(batch=batch).count()
    assert hits >= 4

    first = _page(batch)
    assert counted.built == hits, "every row built once"
    assert _page(batch) == first and counted.built == hits, "shown again: none built"

    for number in range(3):
        counted.built = 0
        assignment = work_once(simulated(f"ann-{number}"), benchmark, honest())
        assert assignment is not None
        shown = _page(batch)
        assert counted.built == 1, "the submitted HIT's row alone is built again"
        assert f'href="/hits/{assignment.hit_id}/"' in shown
        assert shown == _fresh(batch)


@pytest.mark.parametrize("kept", [0, 2])
def test_at_most_the_setting_s_rows_are_kept(monkeypatch: pytest.MonkeyPatch, settings: Any, kept: int) -> None:
    settings.BATCH_HIT_ROWS_KEPT = kept
    monkeypatch.setattr(rows_module, "_HIT_ROWS_SHOWN", {})
    benchmark = make_benchmark(targets=4, candidates=8)
    batch = step2_batch(benchmark)
    first = _page(batch)
    assert _page(batch) == first
    assert sum(len(rows) for rows in rows_module._HIT_ROWS_SHOWN.values()) <= kept
    work_once(simulated("ann"), benchmark, honest())
    assert _page(batch) == _fresh(batch)
    assert sum(len(rows) for rows in rows_module._HIT_ROWS_SHOWN.values()) <= kept


def test_the_batch_page_shows_the_rows_kept_after_a_submit(cast: Cast) -> None:
    benchmark = make_benchmark(targets=3, candidates=8)
    batch = step2_batch(benchmark)
    client = Client()
    client.force_login(cast.researcher)
    url = f"/batches/{batch.pk}/"
    assert client.get(url).status_code == 200
    assignment = work_once(simulated("ann"), benchmark, honest())
    assert assignment is not None
    page = client.get(url).content.decode()
    assert _fresh(batch) in page
    assert '<span class="badge ok">complete</span>' in page or ">1 / " in page
