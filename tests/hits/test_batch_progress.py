"""Batch progress for researchers: HITs complete, assignments in flight, median time, costs."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.db.models import F

from annotation.changes import benchmark_changed
from crowdlex.dialect import SQLITE
from crowds.interface import remote_backend_names
from hits import selectors
from hits.models import HIT, AssignmentStatus, Batch
from hits.selectors import researcher as researcher_selectors
from hits.services import hits_generate
from tests.hits.assignment_data import make_assignment
from tests.hits.generation_data import build_benchmark

pytestmark = pytest.mark.django_db


@pytest.fixture
def batch() -> Batch:
    batch = hits_generate(benchmark=build_benchmark("progress"), step=2, seed=1)
    first, second = batch.hits.order_by("id")[:2]
    for name, seconds in [("w1", 10.0), ("w2", 20.0), ("w3", 30.0)]:
        make_assignment(first, name, seconds=seconds)
    make_assignment(second, "w1", filtered=True, seconds=99.0)
    make_assignment(second, "w2", status=AssignmentStatus.CLAIMED)
    make_assignment(second, "w3", status=AssignmentStatus.CLAIMED, deadline_in=-timedelta(minutes=1))
    make_assignment(second, "w4", status=AssignmentStatus.RETURNED)
    return batch


def test_it_counts_complete_hits_valid_filtered_and_in_flight_assignments(batch: Batch) -> None:
    progress = selectors.batch_progress(batch=batch)
    assert (progress.hits_total, progress.hits_complete) == (5, 1)
    assert (progress.assignments_required, progress.assignments_valid) == (15, 3)
    assert (progress.assignments_filtered, progress.assignments_in_flight) == (1, 1)
    assert progress.percent_complete == pytest.approx(20.0)
    assert progress.percent_assignments == pytest.approx(20.0)


def test_it_reports_the_median_time_of_valid_assignments(batch: Batch) -> None:
    assert selectors.batch_progress(batch=batch).median_seconds == pytest.approx(20.0)


def test_without_time_on_page_the_claim_to_submit_span_counts(batch: Batch, monkeypatch: pytest.MonkeyPatch) -> None:
    batch.hits.first().assignments.update(seconds_on_page=None)  # type: ignore[union-attr]
    # claimed five minutes before submitted in the fixture
    assert selectors.batch_progress(batch=batch).median_seconds == pytest.approx(300.0, abs=1.0)
    # The median is computed in Python where the database has no percentile function.
    monkeypatch.setattr(researcher_selectors, "dialect", lambda: SQLITE)
    assert selectors.batch_progress(batch=batch).median_seconds == pytest.approx(300.0, abs=1.0)


def test_cost_so_far_counts_valid_work_and_the_projection_required_work(batch: Batch) -> None:
    progress = selectors.batch_progress(batch=batch)
    assert progress.cost_so_far == Decimal("0.30")
    assert progress.cost_projected == Decimal("1.50")


def test_progress_of_several_batches_comes_in_one_call(batch: Batch) -> None:
    other = hits_generate(benchmark=build_benchmark("other"), step=2, seed=1)
    progress = selectors.batches_progress(batches=[batch, other])
    assert progress[batch.pk].hits_complete == 1
    assert (progress[other.pk].hits_complete, progress[other.pk].assignments_valid) == (0, 0)
    assert progress[other.pk].median_seconds is None
    assert selectors.batches_progress(batches=[]) == {}


@pytest.mark.parametrize("number", [None, "1", "2", "3", "9", "x"])
def test_a_page_of_the_hit_list_holds_its_hits_in_order_with_their_counts(batch: Batch, number: str | None) -> None:
    """Two HITs a page: the page asked for (the first for none or a wrong number, the last past the
    end), its HITs in id order, each with the whole list's counts."""
    every = [(hit.pk, hit.assignments_valid, hit.assignments_in_flight) for hit in selectors.batch_hits(batch=batch)]  # type: ignore[attr-defined]
    page = selectors.batch_hits_page(batch=batch, number=number, per_page=2)
    shown = {None: 1, "1": 1, "2": 2, "3": 3, "9": 3, "x": 1}[number]
    assert (page.number, page.paginator.num_pages, page.paginator.count) == (shown, 3, 5)
    got = [(hit["pk"], hit["assignments_valid"], hit["assignments_in_flight"]) for hit in page]
    assert got == every[2 * (shown - 1) : 2 * shown]
    assert page.has_next() == (shown < 3)


def test_the_hit_list_counts_valid_and_in_flight_assignments_per_hit(batch: Batch) -> None:
    hits = list(selectors.batch_hits(batch=batch))
    counts = [(hit.assignments_valid, hit.assignments_in_flight) for hit in hits[:3]]  # type: ignore[attr-defined]
    assert counts == [(3, 0), (0, 1), (0, 0)]


# The crowds a batch may be priced by: the local queue and each crowd that pays.
PRICED_BACKENDS = ("local", *sorted(remote_backend_names()))


def _projected_kept_and_fresh(batch: Batch) -> tuple[Decimal, Decimal]:
    """The batch's projected cost as the pages read it after a change (the figures kept per target,
    the projection kept per process) and as counted from its HITs now."""
    benchmark_changed(benchmark_id=batch.benchmark_id)
    now = Batch.objects.get(pk=batch.pk)
    kept = selectors.batches_progress(batches=[now])[batch.pk].cost_projected
    return kept, researcher_selectors._batches_progress(batches=[now])[batch.pk].cost_projected


@pytest.mark.parametrize("backend", PRICED_BACKENDS)
def test_the_projected_cost_kept_per_process_follows_every_change_it_depends_on(
    batch: Batch, backend: str, settings: Any
) -> None:
    """Priced once per crowd, fee rule, reward and HIT sizes (docs/design.md §7): the projection the
    pages show moves with each of them, the kept one as the one counted from the HITs."""
    Batch.objects.filter(pk=batch.pk).update(backend=backend)
    shown = []
    for change in (
        lambda: None,
        lambda: Batch.objects.filter(pk=batch.pk).update(reward=Decimal("0.25")),
        lambda: HIT.objects.filter(pk=batch.hits.order_by("id")[0].pk).update(
            assignments_required=F("assignments_required") + 9
        ),
        lambda: setattr(settings, "PROLIFIC_SERVICE_FEE_RATE", Decimal("0.5")),
        lambda: Batch.objects.filter(pk=batch.pk).update(
            backend="local" if backend != "local" else PRICED_BACKENDS[-1]
        ),
    ):
        change()
        kept, fresh = _projected_kept_and_fresh(batch)
        assert kept == fresh
        shown.append(kept)
    # Each change but the fee rule of a crowd the batch is not on moved the projection.
    assert shown[1] != shown[0] and shown[2] != shown[1] and shown[4] != shown[3]
    if backend == "prolific":
        assert shown[3] != shown[2]


@pytest.mark.parametrize("kept", [0, 1])
def test_a_process_keeping_no_or_one_projection_prices_as_it_counts(
    batch: Batch, kept: int, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.BATCH_PRICES_KEPT = kept
    monkeypatch.setattr(researcher_selectors, "_PROJECTED", {})
    other = hits_generate(benchmark=build_benchmark("other"), step=2, seed=1)
    for each in (batch, other, batch):
        projected, fresh = _projected_kept_and_fresh(each)
        assert projected == fresh
    assert len(researcher_selectors._PROJECTED) <= kept
