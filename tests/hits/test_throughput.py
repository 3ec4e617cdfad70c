"""A batch's throughput by the hour and its ETA, from submissions placed at known times: the last
hour's count, the hours before it, the work remaining, the ETA and the words of its basis; in one
statement for any number of batches, on the batch page, the batches table and the API."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Worker
from hits.models import Assignment, AssignmentStatus, Batch
from hits.selectors import batch_progress, batches_progress, batches_throughput
from hits.selectors.operations import Throughput
from tests.base import logged_in, make_cast
from tests.hits.factories import make_benchmark, make_hits

pytestmark = pytest.mark.django_db


def _submitted(batch: Batch, minutes_ago: list[float], *, now: datetime) -> None:
    """One submitted assignment per entry, each by its own worker on the batch's HITs in turn."""
    hits = list(batch.hits.order_by("id"))
    for index, minutes in enumerate(minutes_ago):
        worker = Worker.objects.create(kind="local", external_id=f"w{batch.pk}-{index}")
        at = now - timedelta(minutes=minutes)
        Assignment.objects.create(
            hit=hits[index % len(hits)],
            worker=worker,
            status=AssignmentStatus.SUBMITTED,
            claimed_at=at - timedelta(minutes=2),
            deadline=at + timedelta(minutes=30),
            submitted_at=at,
        )


def test_the_eta_divides_the_work_left_by_the_last_hours_count_and_says_so() -> None:
    now = timezone.now()
    assert Throughput(per_hour=[6, 2, 0], remaining=9, now=now).eta == timedelta(hours=1.5)
    assert Throughput(per_hour=[6, 2, 0], remaining=9, now=now).basis == (
        "at the last hour's rate of 6 assignments an hour"
    )
    idle = Throughput(per_hour=[0, 5, 5], remaining=9, now=now)
    assert (idle.eta, idle.finish_at, idle.basis, idle.eta_words) == (
        None,
        None,
        "no work in the last hour",
        "no estimate",
    )
    done = Throughput(per_hour=[0, 0], remaining=0, now=now)
    assert (done.eta, done.basis, done.eta_words) == (timedelta(0), "nothing left to collect", "done")
    assert Throughput(per_hour=[1], remaining=50, now=now).eta_words == "about 2 days"


def test_submissions_fall_in_their_hour_and_the_window_ends_where_it_says(settings: object) -> None:
    settings.THROUGHPUT_WINDOW_HOURS = 3  # type: ignore[attr-defined]
    now = timezone.now()
    benchmark = make_benchmark()
    busy = make_hits(benchmark, 4, assignments_per_hit=3)[0].batch  # 12 assignments required
    quiet = make_hits(benchmark, 1, assignments_per_hit=2)[0].batch
    # Two in the last hour, one between one and two hours ago, one three hours ago and more (outside).
    _submitted(busy, [5, 59, 61, 200], now=now)
    _submitted(quiet, [130], now=now)
    batches = [busy, quiet]
    progress = batches_progress(batches=batches, now=now)
    with CaptureQueriesContext(connection) as queries:
        found = batches_throughput(batches=batches, progress=progress, now=now)
    assert len(queries.captured_queries) == 1
    assert found[busy.pk].per_hour == [2, 1, 0]
    assert found[quiet.pk].per_hour == [0, 0, 1]
    # The four submitted are valid: 12 - 4 left at 2 an hour.
    assert (found[busy.pk].remaining, found[busy.pk].eta) == (8, timedelta(hours=4))
    assert found[quiet.pk].basis == "no work in the last hour"
    assert found[busy.pk].oldest_first == [0, 1, 2]


def test_the_batch_page_the_table_and_the_api_show_the_rate_and_the_eta() -> None:
    cast = make_cast()
    now = timezone.now()
    benchmark = make_benchmark()
    batch = make_hits(benchmark, 2, assignments_per_hit=2)[0].batch
    _submitted(batch, [10, 20], now=now)
    client = logged_in(cast.researcher)
    page = client.get(f"/batches/{batch.pk}/").content.decode()
    assert "about 60 minutes" in page and "at the last hour&#x27;s rate of 2 assignments an hour" in page
    table = client.get(f"/benchmarks/{benchmark.name}/batches/").content.decode()
    assert 'data-batch-cell="last_hour">2<' in table
    answer = client.get(f"/api/batches/{batch.pk}/").json()
    assert answer["throughput"]["last_hour"] == 2
    assert answer["throughput"]["remaining"] == 2
    assert answer["throughput"]["eta_seconds"] == 3600
    assert answer["throughput"]["basis"] == "at the last hour's rate of 2 assignments an hour"
    assert answer["paused_at"] is None
    live = client.get(f"/batches/{batch.pk}/live/").json()
    assert live["figures"]["batch.last_hour"] == "2"
    assert batch_progress(batch=batch).assignments_valid == 2
