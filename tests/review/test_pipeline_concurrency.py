"""Two refreshes at once on PostgreSQL: the benchmark row lock makes them run one after the other."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone

from annotation.models import Benchmark, Candidate, CandidateStage, RefreshQueued, RefreshTouched, Target, TargetStage
from hits.models import HIT, Assignment, Batch
from review import tasks
from review.models import ReviewSettings
from review.services import RefreshResult, benchmark_refresh
from schemes.swords import progress as swords_progress
from tests.review.builders import honest, make_benchmark, simulated, spammer, step2_batch, work_once

pytestmark = pytest.mark.django_db(transaction=True)


def run_at_once(benchmark: Benchmark, count: int = 4) -> list[RefreshResult]:
    barrier = threading.Barrier(count)
    results: list[RefreshResult] = []
    errors: list[BaseException] = []

    def refresh() -> None:
        try:
            barrier.wait(timeout=30)
            results.append(benchmark_refresh(benchmark=benchmark))
        except BaseException as error:  # reported in the test thread
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=refresh) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a refresh hung"
    assert not errors, errors
    return results


def collect_step2(*, with_spammer: bool) -> Benchmark:
    """Two targets whose step-2 slots are all taken, not yet refreshed."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL")
    benchmark = make_benchmark(targets=2, candidates=6)
    ReviewSettings.objects.create(benchmark=benchmark)
    step2_batch(benchmark)
    # Keep the on-commit refresh out of the way: the test runs the refreshes itself.
    with mock.patch("hits.services.queue.refresh_touch"):
        if with_spammer:
            work_once(simulated("sam"), benchmark, spammer)
        for worker in [simulated(f"honest-{i}") for i in range(4)]:
            while work_once(worker, benchmark, honest({"perched": "accept", "rested": "accept"})):
                pass
    # The bot signals run in a task of their own, so nothing but the benchmark lock orders the refreshes.
    return benchmark


@pytest.fixture
def slow_reads() -> Iterator[None]:
    """Widen the window between reading the labels and advancing, where two refreshes could race."""
    original = swords_progress.candidate_progress

    def slow(**kwargs: Any) -> Any:
        result = original(**kwargs)
        time.sleep(0.3)
        return result

    with mock.patch.object(swords_progress, "candidate_progress", slow):
        yield


def test_concurrent_refreshes_advance_each_target_once(db: None, slow_reads: None) -> None:
    benchmark = collect_step2(with_spammer=False)

    results = run_at_once(benchmark)

    advanced = sorted(target for result in results for target in result.advanced_targets)
    assert advanced == sorted(Target.objects.filter(benchmark=benchmark).values_list("pk", flat=True))
    assert Batch.objects.filter(benchmark=benchmark, step=3).count() == 1
    assert HIT.objects.filter(batch__benchmark=benchmark, batch__step=3).count() == 2


def test_concurrent_refreshes_filter_once_and_advance_each_target_once(db: None, slow_reads: None) -> None:
    ready = collect_step2(with_spammer=True)

    results = run_at_once(ready)

    assert sum(result.filtered for result in results) == 1
    assert Assignment.objects.filter(filtered=True).count() == 1
    advanced = [target for result in results for target in result.advanced_targets]
    in_score = set(Target.objects.filter(benchmark=ready, stage=TargetStage.SCORE).values_list("pk", flat=True))
    # The spammer's HIT lost a label to filtering, so only the other target is ready, exactly once.
    assert len(advanced) == len(set(advanced)) == len(in_score) == 1
    assert set(advanced) == in_score
    assert Batch.objects.filter(benchmark=ready, step=3).count() == 1
    assert set(
        Candidate.objects.filter(target__in=in_score, stage=CandidateStage.SCORE).values_list("text", flat=True)
    ) == {"perched", "rested"}
    for hit in HIT.objects.filter(batch__benchmark=ready, batch__step=2):
        assert hit.assignments_active == hit.assignments.filter(filtered=False, status="submitted").count()
    # Once settled, more refreshes at once change nothing.
    assert not any(result.changed for result in run_at_once(ready))


def test_a_queued_refresh_that_finds_one_running_is_sent_again_instead_of_waiting_for_it(db: None) -> None:
    """Waiting for the running refresh's lock would hold a worker process the bot signals need."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL")
    benchmark = make_benchmark(targets=1, candidates=4)
    RefreshQueued.objects.create(benchmark=benchmark, queued_at=timezone.now())
    RefreshTouched.objects.create(benchmark=benchmark, worker=simulated("ann"))
    locked, release = threading.Event(), threading.Event()

    def running_refresh() -> None:
        try:
            with transaction.atomic():
                Benchmark.objects.select_for_update(no_key=True).get(pk=benchmark.pk)
                locked.set()
                release.wait(timeout=30)
        finally:
            connections.close_all()

    thread = threading.Thread(target=running_refresh)
    thread.start()
    try:
        assert locked.wait(timeout=30)
        with mock.patch.object(tasks.benchmark_refresh, "apply_async") as sent_again:
            assert tasks.benchmark_refresh(benchmark.pk, touched_only=True) is None
        sent_again.assert_called_once_with((benchmark.pk,), {"touched_only": True}, countdown=tasks.BUSY_RETRY_SECONDS)
        assert RefreshQueued.objects.filter(benchmark=benchmark).exists(), "still queued: its message is the one sent"
    finally:
        release.set()
        thread.join(timeout=30)

    assert tasks.benchmark_refresh(benchmark.pk, touched_only=True) is not None
    assert not RefreshQueued.objects.filter(benchmark=benchmark).exists()
    assert not RefreshTouched.objects.filter(benchmark=benchmark).exists()
