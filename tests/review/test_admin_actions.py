"""The admin's review actions say what they really changed, and what they left and why."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from annotation.access import Role, access_grant, benchmark_owned_by
from annotation.models import Benchmark
from review.models import WorkerFlag
from review.services import benchmark_refresh
from tests.base import Cast, make_user
from tests.review.builders import honest, make_benchmark, simulated, spammer, step2_batch, work_once

pytestmark = pytest.mark.django_db

URL = "/admin/review/workerflag/"


@pytest.fixture
def flagged(cast: Cast) -> Benchmark:
    benchmark = make_benchmark(targets=2, candidates=4)
    step2_batch(benchmark)
    work_once(simulated("sam"), benchmark, spammer)
    work_once(simulated("honest-ann"), benchmark, honest())
    benchmark_refresh(benchmark=benchmark)
    benchmark_owned_by(benchmark=benchmark, user=cast.researcher)
    return benchmark


def act(user: User, action: str, flag: WorkerFlag) -> list[str]:
    client = Client()
    client.force_login(user)
    response = client.post(URL, {"action": action, "_selected_action": [flag.pk]}, follow=True)
    assert response.status_code == 200
    return [str(message) for message in response.context["messages"]]


def test_a_viewer_blocks_nobody_and_is_told_so(flagged: Benchmark, cast: Cast) -> None:
    viewer = make_user("vera", researcher=True)
    access_grant(benchmark=flagged, user=viewer, role=Role.VIEWER, by=cast.researcher)
    flag = WorkerFlag.objects.get(benchmark=flagged)

    said = act(viewer, "block_workers", flag)

    assert said == [
        "1 row(s) left alone: this needs the editor role.",
        "0 worker(s) blocked: no more HITs, and their labels no longer count.",
    ]
    flag.worker.refresh_from_db()
    assert not flag.worker.blocked

    said = act(viewer, "clear_flags", flag)
    assert said == [
        "1 row(s) left alone: this needs the editor role.",
        "0 flag(s) cleared; their benchmarks are being refreshed.",
    ]
    assert WorkerFlag.objects.get(pk=flag.pk).active


def test_blocking_twice_counts_the_worker_once(flagged: Benchmark, cast: Cast) -> None:
    flag = WorkerFlag.objects.get(benchmark=flagged)

    assert act(cast.researcher, "block_workers", flag) == [
        "1 worker(s) blocked: no more HITs, and their labels no longer count."
    ]
    flag.worker.refresh_from_db()
    assert flag.worker.blocked
    assert act(cast.researcher, "block_workers", flag) == [
        "0 worker(s) blocked: no more HITs, and their labels no longer count.",
        "1 left as they were: worker already blocked.",
    ]


def test_clearing_a_cleared_flag_is_not_counted(flagged: Benchmark, cast: Cast) -> None:
    flag = WorkerFlag.objects.get(benchmark=flagged)

    assert act(cast.researcher, "clear_flags", flag) == ["1 flag(s) cleared; their benchmarks are being refreshed."]
    assert not WorkerFlag.objects.get(pk=flag.pk).active
    assert act(cast.researcher, "clear_flags", flag) == [
        "0 flag(s) cleared; their benchmarks are being refreshed.",
        "1 left as they were: already cleared.",
    ]
