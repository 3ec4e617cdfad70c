"""A batch's page and its live poll, read from the progress of every batch kept per change of the
benchmark (hits.selectors.researcher.benchmark_batches_progress) and warmed after a change
(hits/warmers.py), show what a fresh count from every HIT and assignment shows, after any sequence of
claims, submits, returns, expiries, closes and reopens, crowd moves and refreshes, for a benchmark of
every scheme."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from annotation import changes as kept_figures
from annotation.models import Benchmark
from hits import warmers
from hits.models import Batch
from hits.selectors import researcher as researcher_selectors
from hits.services import BatchStateError, HitsGenerationError, batch_clone
from hits.services.queue import SubmissionRefused
from review.services import benchmark_refresh
from tests.base import Cast
from tests.hits.test_kept_shares import BUDGET_BACKENDS, _RandomChanges
from tests.scheme_benchmarks import BENCHMARK_SCHEMES

pytestmark = pytest.mark.django_db

# The page's forms carry a CSRF token masked anew at each answer.
_TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"')


def _shown(client: Client, batch: Batch) -> tuple[Any, str]:
    live = client.get(reverse("batch-live", args=[batch.pk]))
    page = client.get(reverse("batch-detail", args=[batch.pk]))
    assert live.status_code == page.status_code == 200
    return live.json(), _TOKEN.sub("", page.content.decode())


def _fresh(benchmark_id: int) -> dict[int, researcher_selectors.BatchProgress]:
    """Every batch's progress counted now from every HIT and assignment."""
    return researcher_selectors._batches_progress(batches=list(Batch.objects.filter(benchmark_id=benchmark_id)))


def _assert_shown_equal_fresh(client: Client, benchmark: Benchmark, monkeypatch: pytest.MonkeyPatch) -> None:
    batches = list(Batch.objects.filter(benchmark=benchmark).order_by("pk"))
    kept = [_shown(client, batch) for batch in batches]
    with monkeypatch.context() as fresh:
        fresh.setattr(researcher_selectors, "benchmark_batches_progress", _fresh)
        counted = [_shown(client, batch) for batch in batches]
    for batch, (kept_live, kept_page), (fresh_live, fresh_page) in zip(batches, kept, counted, strict=True):
        differing = {
            name: (kept_live[part].get(name), fresh_live[part].get(name))
            for part in ("figures", "bars")
            for name in {*kept_live[part], *fresh_live[part]}
            if kept_live[part].get(name) != fresh_live[part].get(name)
        }
        assert differing == {}, f"the poll of batch {batch.pk}: (kept, fresh) figures"
        assert kept_page == fresh_page, f"the page of batch {batch.pk}"


def _run_changes(cast: Cast, scheme_name: str, monkeypatch: pytest.MonkeyPatch, *, times: int = 24) -> None:
    monkeypatch.setattr(kept_figures, "BUCKET_TARGETS", 2)
    world = _RandomChanges(cast, scheme_name, f"live-{scheme_name}")
    benchmark, first, rng = world.benchmark, world.first, world.rng
    # Priced, so the costs move with the work; a second batch, so one batch's figures are told from another's.
    Batch.objects.filter(benchmark=benchmark).update(reward=Decimal("0.37"))
    target = first.hits.order_by("pk").values_list("target_id", flat=True)[0]
    # A scheme whose step takes a target once keeps its one batch.
    with contextlib.suppress(HitsGenerationError):
        batch_clone(batch=first, targets=[target], force=True, created_by=cast.researcher)
    client = Client()
    client.force_login(cast.researcher)

    def refresh() -> None:
        benchmark_refresh(benchmark=benchmark, touched_only=rng.random() < 0.7, full=rng.random() < 0.3)

    def move_crowd() -> None:
        # The batch's crowd as a publish or a crowd's sync leaves it: the change moves the key.
        Batch.objects.filter(pk=first.pk).update(backend=rng.choice(BUDGET_BACKENDS))
        kept_figures.benchmark_changed(benchmark_id=benchmark.pk)

    def close_or_reopen() -> None:
        # A batch whose candidates the clone holds stays closed: the reopen is refused, nothing changes.
        with contextlib.suppress(BatchStateError):
            world.close_or_reopen()

    def give_back() -> None:
        # Work the crowd handed in meanwhile is not returned: the return is refused, nothing changes.
        with contextlib.suppress(SubmissionRefused):
            world.give_back()

    def warm() -> None:
        # The task a change queues, run before the next reader: the readers find what it computed.
        cache.clear()
        kept_figures.benchmark_changed(benchmark_id=benchmark.pk)
        warmers.batches_warm(benchmark)

    changes: list[tuple[Callable[[], None], int]] = [
        (world.claim, 5),
        (world.submit, 8),
        (give_back, 2),
        (world.expire, 2),
        (refresh, 3),
        (close_or_reopen, 1),
        (move_crowd, 1),
        (warm, 2),
    ]
    world.run(changes, lambda: _assert_shown_equal_fresh(client, benchmark, monkeypatch), times=times)


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_after_any_sequence_of_changes_the_batch_page_and_poll_equal_a_fresh_count(
    cast: Cast, scheme_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _run_changes(cast, scheme_name, monkeypatch)


def test_figures_kept_past_a_change_fail_the_check(cast: Cast, monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted bug: the batches' progress kept under a name alone, not the benchmark's change key,
    so it is never counted again. The check of the test above catches it."""
    kept: dict[int, Any] = {}
    counted = researcher_selectors.benchmark_batches_progress

    def planted(*, benchmark_id: int) -> Any:
        if benchmark_id not in kept:
            kept[benchmark_id] = counted(benchmark_id=benchmark_id)
        return kept[benchmark_id]

    monkeypatch.setattr(researcher_selectors, "benchmark_batches_progress", planted)
    with pytest.raises(AssertionError):
        _run_changes(cast, "swords", monkeypatch)


def test_the_warm_after_a_change_fills_what_the_batch_page_and_poll_read(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = _RandomChanges(cast, "swords", "warm")
    benchmark = world.benchmark
    # Two batches: the benchmark page shows both, each batch's page one.
    target = world.first.hits.order_by("pk").values_list("target_id", flat=True)[0]
    batch_clone(batch=world.first, targets=[target], force=True, created_by=cast.researcher)
    for _ in range(3):
        world.submit()
    kept_figures.benchmark_changed(benchmark_id=benchmark.pk)
    warmers.batches_warm(benchmark)
    computed: list[int] = []
    counted = researcher_selectors._kept_batches_progress

    def recording(*, benchmark_id: int, batches: list[Batch]) -> Any:
        computed.append(benchmark_id)
        return counted(benchmark_id=benchmark_id, batches=batches)

    monkeypatch.setattr(researcher_selectors, "_kept_batches_progress", recording)
    client = Client()
    client.force_login(cast.researcher)
    batches = list(Batch.objects.filter(benchmark=benchmark))
    assert len(batches) == 2
    for batch in batches:
        _shown(client, batch)
    assert computed == [], "the batch's page and poll read the warmed figures"
