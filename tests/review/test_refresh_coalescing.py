"""Submits coalesce their refresh (one queued per benchmark) and the refresh of touched work
reaches the state a whole refresh would (annotation.refresh_requests, review.services.refresh)."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from django.utils import timezone

from annotation.models import Benchmark, Candidate, RefreshQueued, RefreshTouched, Target
from annotation.refresh_requests import refresh_done, refresh_start, refresh_sweep, refresh_touch
from hits.models import HIT, Assignment
from review.models import ReviewSettings, WorkerFlag
from review.services import benchmark_refresh, benchmark_signals
from tests.review.builders import Answerer, honest, make_benchmark, simulated, spammer, step2_batch, work_once

pytestmark = pytest.mark.django_db

Capture = Callable[..., Any]


def pipeline_state(benchmark: Benchmark) -> dict[str, Any]:
    """Everything a refresh decides, in a form two runs can be compared by."""
    return {
        "filtered": sorted(
            Assignment.objects.filter(hit__batch__benchmark=benchmark).values_list("pk", "filtered", "status")
        ),
        "slots": sorted(HIT.objects.filter(batch__benchmark=benchmark).values_list("pk", "assignments_active")),
        "flags": sorted(
            (worker_id, reason, cleared is None)
            for worker_id, reason, cleared in WorkerFlag.objects.filter(benchmark=benchmark).values_list(
                "worker_id", "reason", "cleared_at"
            )
        ),
        "targets": sorted(Target.objects.filter(benchmark=benchmark).values_list("pk", "stage")),
        "candidates": sorted(Candidate.objects.filter(target__benchmark=benchmark).values_list("pk", "stage")),
        "step3_hits": HIT.objects.filter(batch__benchmark=benchmark, batch__step=3).count(),
    }


def sloppy(rng: random.Random, error: float) -> Answerer:
    """Gets each control wrong with probability ``error``: some are filtered, some recover."""
    careful = honest({"perched": "accept", "rested": "accept"})

    def answer(item: Any) -> str:
        value = careful(item)
        if item.control and rng.random() < error:
            return "reject" if value == "accept" else "accept"
        return value

    return answer


def test_a_burst_of_submits_queues_one_refresh_and_it_brings_every_one_up_to_date(
    django_capture_on_commit_callbacks: Capture,
) -> None:
    benchmark = make_benchmark(targets=2, candidates=6)
    step2_batch(benchmark)
    crowd = [(simulated("sam"), spammer)] + [
        (simulated(f"honest-{i}"), honest({"perched": "accept"})) for i in range(3)
    ]

    with django_capture_on_commit_callbacks() as queued:
        submitted = 0
        for worker, answerer in crowd:
            while work_once(worker, benchmark, answerer) is not None:
                submitted += 1
    assert submitted > 4
    assert len(queued) == 1, "every submit after the first found the refresh already queued"
    assert RefreshQueued.objects.filter(benchmark=benchmark).exists()
    workers = set(Assignment.objects.filter(hit__batch__benchmark=benchmark).values_list("worker_id", flat=True))
    assert set(RefreshTouched.objects.filter(benchmark=benchmark).values_list("worker_id", flat=True)) == workers

    queued[0]()  # the task, run inline

    assert not RefreshQueued.objects.exists() and not RefreshTouched.objects.exists()
    assert Assignment.objects.filter(worker__external_id="sam", filtered=True).exists()
    current = pipeline_state(benchmark)
    assert not benchmark_refresh(benchmark=benchmark).changed
    assert pipeline_state(benchmark) == current


def test_work_arriving_after_the_refresh_started_queues_the_next_one(
    django_capture_on_commit_callbacks: Capture,
) -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    step2_batch(benchmark)
    ann, ben = simulated("ann"), simulated("ben")
    assert refresh_touch(benchmark_id=benchmark.pk, worker_ids=[ann.pk])
    assert not refresh_touch(benchmark_id=benchmark.pk, worker_ids=[ben.pk])

    touched = refresh_start(benchmark_id=benchmark.pk)

    assert touched.worker_ids == {ann.pk, ben.pk}
    with django_capture_on_commit_callbacks() as queued:
        assert refresh_touch(benchmark_id=benchmark.pk, worker_ids=[ann.pk])
    assert len(queued) == 1


def test_a_stale_queued_refresh_is_queued_again(django_capture_on_commit_callbacks: Capture) -> None:
    """A queued row whose message was lost (broker down at commit) does not stall the pipeline for good."""
    benchmark = make_benchmark(targets=1, candidates=4)
    RefreshQueued.objects.create(benchmark=benchmark, queued_at="2020-01-01T00:00:00Z")
    with django_capture_on_commit_callbacks() as queued:
        assert refresh_touch(benchmark_id=benchmark.pk, worker_ids=[simulated("ann").pk])
        assert not refresh_touch(benchmark_id=benchmark.pk, worker_ids=[simulated("ann").pk])
    assert len(queued) == 1


def test_a_queued_refresh_is_taken_for_lost_after_the_age_the_setting_names(
    django_capture_on_commit_callbacks: Capture, settings: Any
) -> None:
    """REFRESH_QUEUED_STALE_SECONDS decides when a queued refresh counts as lost: younger, a submit
    trusts it; older, the submit queues the refresh again."""
    benchmark = make_benchmark(targets=1, candidates=4)
    ann = simulated("ann")
    RefreshQueued.objects.create(benchmark=benchmark, queued_at=timezone.now() - timedelta(seconds=300))
    settings.REFRESH_QUEUED_STALE_SECONDS = 600
    with django_capture_on_commit_callbacks() as trusted:
        assert not refresh_touch(benchmark_id=benchmark.pk, worker_ids=[ann.pk])
    assert trusted == []
    settings.REFRESH_QUEUED_STALE_SECONDS = 60
    with django_capture_on_commit_callbacks() as queued:
        assert refresh_touch(benchmark_id=benchmark.pk, worker_ids=[ann.pk])
    assert len(queued) == 1


def test_the_sweep_queues_touched_work_whose_refresh_was_lost_and_nothing_else(
    django_capture_on_commit_callbacks: Capture,
) -> None:
    lost, waiting, done = (make_benchmark(targets=1, candidates=4) for _ in range(3))
    ann = simulated("ann")
    for benchmark in (lost, waiting):
        refresh_touch(benchmark_id=benchmark.pk, worker_ids=[ann.pk])
    RefreshQueued.objects.filter(benchmark=lost).delete()  # its message never reached the broker
    refresh_touch(benchmark_id=done.pk, worker_ids=[ann.pk])
    benchmark_refresh(benchmark=done, touched_only=True)

    with django_capture_on_commit_callbacks() as queued:
        assert refresh_sweep() == [lost.pk]
    assert len(queued) == 1


def test_a_worker_starting_queues_every_refresh_still_owed_however_recently_queued(
    django_capture_on_commit_callbacks: Capture,
) -> None:
    """What a worker sends as it starts (review.tasks): the worker killed before it may have held the
    messages of refreshes that still count as queued, and of one whose work is already gone."""
    held, empty, done = (make_benchmark(targets=1, candidates=4) for _ in range(3))
    ann = simulated("ann")
    refresh_touch(benchmark_id=held.pk, worker_ids=[ann.pk])
    RefreshQueued.objects.create(benchmark=empty, queued_at=timezone.now())
    refresh_touch(benchmark_id=done.pk, worker_ids=[ann.pk])
    benchmark_refresh(benchmark=done, touched_only=True)

    with django_capture_on_commit_callbacks() as queued:
        assert refresh_sweep() == []
    assert queued == []
    with django_capture_on_commit_callbacks() as queued:
        assert refresh_sweep(recover=True) == [held.pk, empty.pk]
    assert len(queued) == 2
    for refresh in queued:
        refresh()  # inline here, as a worker runs them
    # Nothing is owed or queued any more, and a second start queues nothing.
    assert not RefreshQueued.objects.exists() and not RefreshTouched.objects.exists()
    with django_capture_on_commit_callbacks() as queued:
        assert refresh_sweep(recover=True) == []
    assert queued == []


def test_a_refresh_that_dies_leaves_its_work_for_the_next_run() -> None:
    """What a killed worker does to a late-acknowledged task: the redelivered run still sees the work."""
    benchmark = make_benchmark(targets=1, candidates=4)
    step2_batch(benchmark)
    sam = simulated("sam")
    assert work_once(sam, benchmark, spammer) is not None

    with (
        mock.patch("review.services.refresh._apply_filtering", side_effect=RuntimeError("worker killed")),
        pytest.raises(RuntimeError),
    ):
        benchmark_refresh(benchmark=benchmark, touched_only=True)
    assert RefreshTouched.objects.filter(benchmark=benchmark, worker=sam).exists()

    result = benchmark_refresh(benchmark=benchmark, touched_only=True)

    assert result.filtered == 1
    assert not RefreshTouched.objects.filter(benchmark=benchmark).exists()
    assert not benchmark_refresh(benchmark=benchmark, touched_only=True).changed


def test_a_worker_touched_again_during_a_refresh_stays_touched() -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    ann = simulated("ann")
    refresh_touch(benchmark_id=benchmark.pk, worker_ids=[ann.pk])
    touched = refresh_start(benchmark_id=benchmark.pk)
    refresh_touch(benchmark_id=benchmark.pk, worker_ids=[ann.pk])  # a submit while the refresh runs

    refresh_done(benchmark_id=benchmark.pk, touched=touched)

    assert RefreshTouched.objects.get(benchmark=benchmark, worker=ann).touches == 2


def test_a_worker_touched_again_after_another_refresh_forgot_it_stays_touched() -> None:
    # Two refreshes read the same row: the second started while the first ran (it waits for the
    # benchmark's lock). The first forgets the row; a submit then touches the worker afresh (a new
    # row, counting from 1 again) after the second had read its work. The second must not forget it.
    benchmark = make_benchmark(targets=1, candidates=4)
    ann = simulated("ann")
    refresh_touch(benchmark_id=benchmark.pk, worker_ids=[ann.pk])
    first = refresh_start(benchmark_id=benchmark.pk)
    second = refresh_start(benchmark_id=benchmark.pk)
    refresh_done(benchmark_id=benchmark.pk, touched=first)
    refresh_touch(benchmark_id=benchmark.pk, worker_ids=[ann.pk])  # the submit the second did not see

    refresh_done(benchmark_id=benchmark.pk, touched=second)

    assert RefreshTouched.objects.get(benchmark=benchmark, worker=ann).touches == 1


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_refreshing_touched_work_as_it_comes_reaches_the_state_of_a_whole_refresh(
    seed: int, django_capture_on_commit_callbacks: Capture
) -> None:
    """A randomised collection: spammers, careless and careful workers submit in a random order, and
    the queued refresh runs at random moments. Whenever it has run, a whole refresh finds nothing
    to change, down to the last submit, and neither does a computation of the bot signals from scratch."""
    rng = random.Random(seed)
    benchmark = make_benchmark(targets=3, candidates=6)
    ReviewSettings.objects.create(benchmark=benchmark)
    step2_batch(benchmark, seed=seed)
    crowd: list[tuple[Any, Answerer]] = [(simulated(f"spam-{seed}-{i}"), spammer) for i in range(2)]
    crowd += [(simulated(f"sloppy-{seed}-{i}"), sloppy(rng, 0.4)) for i in range(3)]
    crowd += [(simulated(f"careful-{seed}-{i}"), sloppy(rng, 0.0)) for i in range(4)]
    pending: list[Callable[[], Any]] = []
    compared = 0

    def run_queued() -> None:
        with django_capture_on_commit_callbacks(execute=True):
            while pending:
                pending.pop()()

    def compare_with_whole() -> None:
        current = pipeline_state(benchmark)
        assert not benchmark_refresh(benchmark=benchmark).changed
        assert pipeline_state(benchmark) == current
        # The bot signals: once a run held back by the throttle has run, a run from scratch changes nothing.
        benchmark_signals(benchmark=benchmark)
        assert not benchmark_signals(benchmark=benchmark, force=True).changed

    progress = True
    while progress:  # rounds: work the refresh re-opens (filtered slots, step-3 HITs) brings the crowd back
        progress = False
        rng.shuffle(crowd)
        for worker, answerer in crowd:
            for _ in range(rng.randint(1, 3)):
                with django_capture_on_commit_callbacks() as queued:
                    done = work_once(worker, benchmark, answerer, seconds=rng.uniform(20, 120))
                pending += queued
                assert len(pending) <= 1, "a second refresh was queued while one was pending"
                if done is None:
                    break
                progress = True
                if rng.random() < 0.3:
                    run_queued()
                    if rng.random() < 0.3:
                        compare_with_whole()
                        compared += 1
        run_queued()

    compare_with_whole()
    assert compared > 0
    state = pipeline_state(benchmark)
    assert any(filtered for _, filtered, _ in state["filtered"]), "the spammers were filtered"
    assert state["step3_hits"] > 0, "targets advanced to step 3"
