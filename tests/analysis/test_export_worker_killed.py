"""An export job finishes after the Celery worker writing it is killed mid-task: the task was not
acknowledged, so Redis hands it to the next worker, which takes the silent job over."""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path

import pytest
from django.db import transaction
from pytest_django.fixtures import Settings

from analysis import services
from analysis.exports.base import PROGRESS_EVERY
from analysis.models import ExportJob, ExportStatus
from tests.analysis.labelled import labelled_benchmark
from tests.celery_worker import running_worker, tasks_sent_to

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

VISIBILITY_SECONDS = 2
FINISH_SECONDS = 90


def _wait_for(job: ExportJob, status: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.status == status:
            return
        time.sleep(0.05)
    pytest.fail(f"export {job.pk} was {job.status}, not {status}, after {seconds} s")


def test_an_export_finishes_after_its_worker_is_killed_mid_task(
    redis_url: str, tmp_path: Path, settings: Settings
) -> None:
    settings.MEDIA_ROOT = tmp_path
    # Enough labels for several progress reports: the export outlasts the test's look at it.
    candidates = [(f"word{n}", ["coinco"], "AR" * 50) for n in range(8 * PROGRESS_EVERY // 100)]
    benchmark = labelled_benchmark("killed", [("calm", "adj", candidates)])
    environment = {
        "MEDIA_ROOT": str(tmp_path),
        "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY_SECONDS),
        "EXPORT_JOB_HEARTBEAT_SECONDS": "1",
        "EXPORT_JOB_TIMEOUT_SECONDS": "600",
    }
    queue = f"test-export-{uuid.uuid4().hex[:12]}"

    with tasks_sent_to(redis_url, queue):
        with running_worker(
            redis_url=redis_url, queue=queue, log_path=tmp_path / "first.log", environment=environment
        ) as first:
            job = services.export_job_create(benchmark=benchmark, format="labels-csv", compress=False)
            _wait_for(job, ExportStatus.RUNNING, FINISH_SECONDS)
            # Holding the job's row makes the worker's next progress report wait: it cannot finish.
            with transaction.atomic():
                assert ExportJob.objects.select_for_update().get(pk=job.pk).status == ExportStatus.RUNNING
                first.kill()
                first.wait(timeout=15)
        # Unacknowledged for longer than the visibility timeout: the next worker gets the task again.
        time.sleep(VISIBILITY_SECONDS + 1)
        job.refresh_from_db()
        assert job.status == ExportStatus.RUNNING
        with running_worker(
            redis_url=redis_url, queue=queue, log_path=tmp_path / "second.log", environment=environment
        ):
            _wait_for(job, ExportStatus.DONE, FINISH_SECONDS)

    # The export never finished in the first worker (the sweep each worker sends as it starts may have).
    assert not re.search(r"export_run\[[^]]*\] succeeded", (tmp_path / "first.log").read_text())
    assert "export_run" in (tmp_path / "second.log").read_text()
    assert job.progress == 1.0 and not job.error
    lines = services.export_job_file(job).read_text().splitlines()
    assert len(lines) == 1 + len(candidates) * 100
