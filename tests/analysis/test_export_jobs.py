from pathlib import Path
from unittest import mock

import pytest
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks, Settings

from analysis import services
from analysis.models import ExportJob, ExportStatus
from analysis.tasks import export_run
from tests.analysis.labelled import labelled_benchmark

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

    with mock.patch("analysis.services.benchmark_export_to_path", side_effect=spy):
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
    with mock.patch("analysis.exports.candidate_rows", side_effect=RuntimeError("disk on fire")):
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
