"""The bot signals run in a task of their own (review.services.signals): requested by the refresh,
one run queued per benchmark however many refreshes ask, throttled, sent again when lost; their
flags still reach the pages, the API and the automatic blocks."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Benchmark, Worker
from review.models import FlagReason, SignalsState, WorkerFlag
from review.services import (
    benchmark_refresh,
    benchmark_signals,
    review_settings_update,
    signals_request,
    signals_sweep,
)
from review.services.signals import OVERDUE, SIGNALS_TASK
from tests.base import PASSWORD, Cast
from tests.review.builders import honest, make_benchmark, simulated, step2_batch, work_once

pytestmark = pytest.mark.django_db

Capture = Callable[..., Any]


def state(benchmark: Benchmark) -> SignalsState:
    return SignalsState.objects.get(benchmark=benchmark)


def signals_messages(callbacks: list[Callable[[], Any]]) -> list[Callable[[], Any]]:
    """The queued bot-signal runs among on-commit callbacks (partials of the task's ``apply_async``)."""

    def queues_signals(callback: Callable[[], Any]) -> bool:
        task = getattr(getattr(callback, "func", None), "__self__", None)
        return getattr(task, "name", None) == SIGNALS_TASK

    return [callback for callback in callbacks if queues_signals(callback)]


def fast_and_careful(benchmark: Benchmark, *, fast: Worker, careful: list[Worker], rounds: int = 3) -> None:
    """``fast`` answers like the others but at a glance: the "fast" signal, and no control fails."""
    for _ in range(rounds):
        assert work_once(fast, benchmark, honest(), seconds=1.0) is not None
        for worker in careful:
            assert work_once(worker, benchmark, honest(), seconds=90.0) is not None


def test_a_burst_of_refreshes_queues_one_signals_run_that_brings_the_flags_up_to_date(
    django_capture_on_commit_callbacks: Capture,
) -> None:
    benchmark = make_benchmark(targets=3, candidates=8)
    step2_batch(benchmark)
    fast, careful = simulated("quick"), [simulated(f"careful-{i}") for i in range(2)]
    queued: list[Callable[[], Any]] = []
    for _ in range(3):
        with django_capture_on_commit_callbacks() as submits:
            fast_and_careful(benchmark, fast=fast, careful=careful, rounds=1)
        assert len(submits) == 1, "the submits queued one refresh"
        with django_capture_on_commit_callbacks() as refresh:
            submits[0]()  # the refresh, inline
        queued += signals_messages(refresh)

    assert len(queued) == 1, "the refreshes after the first found the signals run pending"
    assert state(benchmark).requests == 3 and state(benchmark).pending
    assert not WorkerFlag.objects.filter(reason=FlagReason.FAST).exists(), "no refresh computed a signal"

    queued[0]()  # the signals task, inline

    flag = WorkerFlag.objects.get(benchmark=benchmark, reason=FlagReason.FAST)
    assert flag.worker == fast and flag.active and flag.evidence["timed_assignments"] == 3
    assert not state(benchmark).pending and state(benchmark).assignments == 9
    assert not benchmark_signals(benchmark=benchmark, force=True).changed, "the run saw all the work"


def test_a_refresh_no_longer_computes_the_signals_it_only_requests_them(
    django_capture_on_commit_callbacks: Capture,
) -> None:
    benchmark = make_benchmark(targets=3, candidates=8)
    step2_batch(benchmark)
    with django_capture_on_commit_callbacks():
        fast_and_careful(benchmark, fast=simulated("quick"), careful=[simulated("careful")])

    with (
        mock.patch("review.services.signals.worker_signals", side_effect=AssertionError("computed")) as computed,
        mock.patch("review.selectors.submitted_work", side_effect=AssertionError("read every answer")),
        django_capture_on_commit_callbacks() as callbacks,
    ):
        benchmark_refresh(benchmark=benchmark, touched_only=True)
        benchmark_refresh(benchmark=benchmark)

    assert not computed.called
    assert len(signals_messages(callbacks)) == 1
    assert state(benchmark).requests == 2


def test_signals_reach_the_flags_the_pages_the_api_and_the_automatic_blocks(
    cast: Cast, django_capture_on_commit_callbacks: Capture
) -> None:
    benchmark = make_benchmark(targets=3, candidates=8)
    step2_batch(benchmark)
    review_settings_update(benchmark=benchmark, auto_block_signals=True)
    fast = simulated("quick")
    # Every task runs as it would in a worker: refresh, then signals, then the refresh of the block.
    with django_capture_on_commit_callbacks(execute=True):
        fast_and_careful(benchmark, fast=fast, careful=[simulated(f"careful-{i}") for i in range(2)])
    with django_capture_on_commit_callbacks(execute=True):
        signals_sweep(now=timezone.now() + timedelta(minutes=11))  # a run held back by the throttle is due

    fast.refresh_from_db()
    assert fast.blocked and "implausibly fast" in fast.blocked_reason
    assert not fast.assignments.filter(filtered=False).exists(), "the refresh filtered the blocked worker's work"
    assert fast.assignments.count() == 3
    page = Client()
    assert page.login(username=cast.researcher.username, password=PASSWORD)
    html = page.get(reverse("pipeline-workers", args=[benchmark.name])).content.decode()
    assert "quick" in html and "implausibly fast" in html
    api = APIClient()
    api.force_authenticate(cast.researcher)
    flags = api.get(f"/api/benchmarks/{benchmark.name}/flags/").json()
    rows = flags["results"] if isinstance(flags, dict) else flags
    assert [(row["reason"], row["active"]) for row in rows] == [("fast", True)]


def test_a_run_not_due_yet_is_held_back_and_sent_by_the_first_request_after(
    django_capture_on_commit_callbacks: Capture,
) -> None:
    """In-process Celery has no timers: the throttle holds the run instead of delaying its message."""
    benchmark = make_benchmark(targets=1, candidates=4)
    with django_capture_on_commit_callbacks(execute=True):
        assert signals_request(benchmark_id=benchmark.pk)
    ran = state(benchmark)
    assert not ran.pending and ran.computed_at is not None

    with django_capture_on_commit_callbacks() as callbacks:
        assert not signals_request(benchmark_id=benchmark.pk)
    held = state(benchmark)
    assert held.pending and held.queued_at is None and held.due_at is not None and held.due_at > ran.computed_at
    assert callbacks == []

    with django_capture_on_commit_callbacks() as callbacks:
        assert signals_request(benchmark_id=benchmark.pk, now=held.due_at + timedelta(seconds=1))
    assert len(signals_messages(callbacks)) == 1


def test_a_lost_signals_run_is_sent_again_by_the_sweep_once_overdue(
    django_capture_on_commit_callbacks: Capture,
) -> None:
    benchmark, other = make_benchmark(targets=1, candidates=4), make_benchmark(targets=1, candidates=4)
    with django_capture_on_commit_callbacks() as lost:
        assert signals_request(benchmark_id=benchmark.pk)  # its message never reaches the broker
    assert len(lost) == 1
    with django_capture_on_commit_callbacks(execute=True):
        signals_request(benchmark_id=other.pk)  # ran: nothing to send again

    with django_capture_on_commit_callbacks() as callbacks:
        assert signals_sweep() == []
        assert not signals_request(benchmark_id=benchmark.pk), "a request while one is queued only counts"
    assert callbacks == []

    later = timezone.now() + OVERDUE + timedelta(seconds=5)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert signals_sweep(now=later) == [benchmark.pk]
    assert len(callbacks) == 1
    assert not state(benchmark).pending and state(benchmark).computed_requests == 2


def test_a_worker_starting_sends_every_pending_signals_run_again_overdue_or_not(
    django_capture_on_commit_callbacks: Capture,
) -> None:
    benchmark, other = make_benchmark(targets=1, candidates=4), make_benchmark(targets=1, candidates=4)
    with django_capture_on_commit_callbacks():
        assert signals_request(benchmark_id=benchmark.pk)  # its message held by a worker killed since
    with django_capture_on_commit_callbacks(execute=True):
        signals_request(benchmark_id=other.pk)  # ran: nothing to send again

    with django_capture_on_commit_callbacks() as callbacks:
        assert signals_sweep() == []
    assert callbacks == []
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert signals_sweep(recover=True) == [benchmark.pk]
    assert len(callbacks) == 1
    assert not state(benchmark).pending


def test_a_run_that_dies_leaves_its_requests_pending_for_the_next(
    django_capture_on_commit_callbacks: Capture,
) -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    with django_capture_on_commit_callbacks():
        signals_request(benchmark_id=benchmark.pk)
    with (
        mock.patch("review.services.signals.sync_signal_flags", side_effect=RuntimeError("worker killed")),
        pytest.raises(RuntimeError),
    ):
        benchmark_signals(benchmark=benchmark)
    assert state(benchmark).pending

    result = benchmark_signals(benchmark=benchmark)

    assert result.ran and not state(benchmark).pending
    assert not benchmark_signals(benchmark=benchmark).ran, "nothing pending: a duplicate message returns at once"


def test_a_request_during_a_run_is_left_pending_and_queues_the_next_run(
    django_capture_on_commit_callbacks: Capture,
) -> None:
    benchmark = make_benchmark(targets=1, candidates=4)
    with django_capture_on_commit_callbacks():
        signals_request(benchmark_id=benchmark.pk)
    original = benchmark_signals.__globals__["worker_signals"]

    def and_a_request_meanwhile(*args: Any, **kwargs: Any) -> Any:
        signals_request(benchmark_id=benchmark.pk)  # a refresh committing while the run reads
        return original(*args, **kwargs)

    with mock.patch("review.services.signals.worker_signals", and_a_request_meanwhile):
        assert benchmark_signals(benchmark=benchmark).ran

    after = state(benchmark)
    assert after.pending and after.requests == 2 and after.computed_requests == 1
    assert after.due_at is not None and after.computed_at is not None and after.due_at > after.computed_at
    assert benchmark_signals(benchmark=benchmark).ran and not state(benchmark).pending
