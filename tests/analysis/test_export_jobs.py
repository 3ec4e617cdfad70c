from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from django.test import Client
from django.utils import timezone
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks, Settings
from rest_framework.test import APIClient

from analysis import services
from analysis.models import ExportJob, ExportStatus
from analysis.tasks import export_jobs_fail_stuck, export_run
from tests.analysis.labelled import labelled_benchmark
from tests.base import Cast

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings: Settings, tmp_path: Path) -> Path:
    settings.MEDIA_ROOT = tmp_path
    return tmp_path


def _job(format: str = "candidates-csv") -> ExportJob:
    benchmark = labelled_benchmark("jobs", [("calm", "adj", [("still", ["coinco"], "ARA")])])
    return services.export_job_create(benchmark=benchmark, format=format, compress=False)


def test_a_job_is_queued_only_once_committed(
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    with mock.patch("analysis.tasks.export_run.delay") as delay:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            job = _job()
        delay.assert_not_called()
        for callback in callbacks:
            callback()
        delay.assert_called_once_with(job.pk)


def test_a_job_runs_once_and_reports_progress(media: Path) -> None:
    job = _job()
    progress: list[float] = []
    real = services.benchmark_export_to_path

    def spy(**kwargs: object) -> Path:
        kwargs["progress"](1, 2)  # type: ignore[operator]
        progress.append(ExportJob.objects.get(pk=job.pk).progress)
        return real(**kwargs)  # type: ignore[arg-type]

    with mock.patch("analysis.services.exports.benchmark_export_to_path", side_effect=spy):
        export_run(job.pk)
    job.refresh_from_db()
    assert progress == [0.5]
    assert (job.status, job.progress, job.finished_at is not None) == (ExportStatus.DONE, 1.0, True)
    path = services.export_job_file(job)
    assert path.read_text().startswith("candidate_id,") and path.parent == media / "exports"
    first_write = path.stat().st_mtime_ns
    export_run(job.pk)  # a redelivered task: nothing happens
    assert path.stat().st_mtime_ns == first_write


def test_a_failing_job_records_the_error_and_leaves_no_file() -> None:
    job = _job()
    with mock.patch("analysis.exports.candidate_batches", side_effect=RuntimeError("disk on fire")):
        export_run(job.pk)
    job.refresh_from_db()
    assert job.status == ExportStatus.FAILED and "disk on fire" in job.error
    assert not services.export_job_file(job).exists()
    assert not list(services.export_job_file(job).parent.glob("*.partial"))


def test_a_vanished_job_is_ignored() -> None:
    job = _job()
    ExportJob.objects.filter(pk=job.pk).delete()
    assert services.export_job_run(job_id=job.pk) is None
    with pytest.raises(ValueError, match="unknown export format"):
        services.export_job_create(benchmark=job.benchmark, format="xml")


def _running(job: ExportJob, *, silent_for: timedelta) -> None:
    ExportJob.objects.filter(pk=job.pk).update(status=ExportStatus.RUNNING, heartbeat_at=timezone.now() - silent_for)


def test_a_job_whose_worker_went_silent_is_taken_over_by_a_redelivered_task(settings: Settings) -> None:
    job = _job()
    _running(job, silent_for=timedelta(seconds=settings.EXPORT_JOB_HEARTBEAT_SECONDS + 1))

    export_run(job.pk)

    job.refresh_from_db()
    assert job.status == ExportStatus.DONE
    assert services.export_job_file(job).read_text().startswith("candidate_id,")


def test_a_job_whose_worker_still_reports_is_left_to_it(settings: Settings) -> None:
    job = _job()
    _running(job, silent_for=timedelta(seconds=settings.EXPORT_JOB_HEARTBEAT_SECONDS - 5))

    export_run(job.pk)

    job.refresh_from_db()
    assert job.status == ExportStatus.RUNNING
    assert not services.export_job_file(job).exists()


def test_progress_renews_the_heartbeat() -> None:
    job = _job()
    beats: list[datetime | None] = []
    real = services.benchmark_export_to_path

    def spy(**kwargs: Any) -> Path:
        beats.append(ExportJob.objects.get(pk=job.pk).heartbeat_at)
        kwargs["progress"](1, 2)
        beats.append(ExportJob.objects.get(pk=job.pk).heartbeat_at)
        return real(**kwargs)

    with mock.patch("analysis.services.exports.benchmark_export_to_path", side_effect=spy):
        export_run(job.pk)

    assert beats[0] is not None and beats[1] is not None and beats[1] > beats[0]


def test_a_job_silent_past_the_timeout_is_marked_failed_and_restarts(
    settings: Settings, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    stuck = _job()
    alive = services.export_job_create(benchmark=stuck.benchmark, format="stats", compress=False)
    _running(stuck, silent_for=timedelta(seconds=settings.EXPORT_JOB_TIMEOUT_SECONDS + 1))
    _running(alive, silent_for=timedelta(seconds=5))

    assert export_jobs_fail_stuck() == 1

    stuck.refresh_from_db()
    assert stuck.status == ExportStatus.FAILED and "Restart it" in stuck.error
    assert ExportJob.objects.get(pk=alive.pk).status == ExportStatus.RUNNING
    with django_capture_on_commit_callbacks(execute=True):
        assert services.export_job_restart(job=stuck)
    stuck.refresh_from_db()
    assert (stuck.status, stuck.error) == (ExportStatus.DONE, "")
    assert not services.export_job_restart(job=stuck)


def test_researchers_restart_a_failed_job_from_the_api_and_the_page(
    cast: Cast, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    job = _job()
    ExportJob.objects.filter(pk=job.pk).update(status=ExportStatus.FAILED, error="Stopped")
    api = APIClient()
    api.force_authenticate(cast.researcher)
    annotator = APIClient()
    annotator.force_authenticate(cast.alice)
    page = Client()
    page.force_login(cast.researcher)

    assert annotator.post(f"/api/exports/{job.pk}/restart").status_code == 403
    assert "Restart" in page.get(f"/benchmarks/{job.benchmark.name}/exports/").content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(f"/api/exports/{job.pk}/restart")
    assert response.status_code == 200 and response.json()["status"] == "pending"
    assert ExportJob.objects.get(pk=job.pk).status == ExportStatus.DONE
    assert api.post(f"/api/exports/{job.pk}/restart").status_code == 409

    ExportJob.objects.filter(pk=job.pk).update(status=ExportStatus.FAILED)
    with django_capture_on_commit_callbacks(execute=True):
        assert page.post(f"/exports/{job.pk}/restart").status_code == 302
    assert ExportJob.objects.get(pk=job.pk).status == ExportStatus.DONE
