"""Import jobs: run once however often their task is delivered, taken over when their worker fell
silent, seen by their creator and their benchmark's viewers alone, and telling their progress."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from annotation.access import Role, access_grant
from annotation.importers import jobs
from annotation.importers.jobs import import_job_create, import_job_progress, import_job_run, import_jobs_fail_stuck
from annotation.models import Benchmark, ImportJob, ImportJobStatus, Label
from tests.annotation.import_helpers import FIXTURES, coat_record, record
from tests.base import Cast, make_user

pytestmark = pytest.mark.django_db


def _upload(*records: dict[str, Any], name: str = "words.jsonl") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, "".join(json.dumps(r) + "\n" for r in records).encode())


def _client(user: object) -> Client:
    client = Client()
    client.force_login(user)  # type: ignore[arg-type]
    return client


def test_a_job_delivered_twice_imports_once(cast: Cast, settings: Any) -> None:
    job = import_job_create(upload=_upload(record(), coat_record()), benchmark_name="words", created_by=cast.researcher)
    stored = Path(settings.MEDIA_ROOT) / job.path
    assert stored.is_file()

    first = import_job_run(job_id=job.pk)
    again = import_job_run(job_id=job.pk)

    assert first is not None and again is not None
    assert (first.status, again.status) == (ImportJobStatus.DONE, ImportJobStatus.DONE)
    assert again.finished_at == first.finished_at
    assert Label.objects.count() == 14
    assert not stored.exists()
    assert import_job_run(job_id=job.pk + 1000) is None


def test_a_running_job_is_left_to_its_live_worker_and_taken_over_once_it_falls_silent(
    cast: Cast, settings: Any
) -> None:
    job = import_job_create(upload=_upload(record()), benchmark_name="words", created_by=cast.researcher)
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJobStatus.RUNNING)
    key = f"import-job:{job.pk}:progress"
    cache.set(key, {"done": 0, "total": None, "at": timezone.now().timestamp()})

    left = import_job_run(job_id=job.pk)
    assert left is not None and left.status == ImportJobStatus.RUNNING
    assert Label.objects.count() == 0

    stale = timezone.now().timestamp() - settings.IMPORT_JOB_HEARTBEAT_SECONDS - 1
    cache.set(key, {"done": 0, "total": None, "at": stale})
    taken = import_job_run(job_id=job.pk)
    assert taken is not None and taken.status == ImportJobStatus.DONE
    assert Label.objects.count() == taken.report["labels"]["created"] > 0  # type: ignore[index]


def test_a_job_reports_its_progress_while_it_runs(cast: Cast, monkeypatch: pytest.MonkeyPatch) -> None:
    job = import_job_create(
        upload=SimpleUploadedFile("release.json.gz", (FIXTURES / "swords_small.json.gz").read_bytes()),
        benchmark_name="sw",
        created_by=cast.researcher,
    )
    seen: list[tuple[str, Any]] = []
    real = jobs.benchmark_import

    def watched(**kwargs: Any) -> Any:
        reported = kwargs["progress"]

        def progress(done: int, total: int | None) -> None:
            reported(done, total)
            row = ImportJob.objects.get(pk=job.pk)
            seen.append((row.status, import_job_progress(row)))

        return real(**{**kwargs, "progress": progress})

    monkeypatch.setattr(jobs, "benchmark_import", watched)
    finished = import_job_run(job_id=job.pk)

    assert finished is not None and finished.status == ImportJobStatus.DONE
    assert seen, "the import reported no progress"
    status, last = seen[-1]
    assert status == ImportJobStatus.RUNNING
    # Every target of the file written, the last report says so.
    assert last is not None and last["done"] == last["total"]
    assert last["total"] >= finished.report["targets"]["created"] > 0  # type: ignore[index]
    # Once done, the progress is dropped: the report says it all.
    assert import_job_progress(finished) is None


def test_the_job_page_shows_the_progress_of_a_running_job(cast: Cast) -> None:
    Benchmark.objects.create(name="words")
    job = import_job_create(upload=_upload(record()), benchmark_name="words", created_by=cast.researcher)
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJobStatus.RUNNING)
    cache.set(f"import-job:{job.pk}:progress", {"done": 3, "total": 12, "at": timezone.now().timestamp()})
    client = _client(cast.researcher)

    page = client.get(reverse("import-job", args=[job.pk])).content.decode()
    assert "3 of 12 targets imported so far" in page and 'aria-valuenow="25"' in page
    api = client.get(reverse("api-import-job", args=[job.pk])).json()
    assert (api["status"], api["progress"]) == ("running", {"done": 3, "total": 12})


def test_a_job_is_seen_by_its_creator_and_the_viewers_of_its_benchmark_alone(cast: Cast) -> None:
    other = make_user("olga", researcher=True)
    viewer = make_user("vera", researcher=True)
    job = import_job_create(upload=_upload(record()), benchmark_name="fresh", created_by=cast.researcher)
    url, page = reverse("api-import-job", args=[job.pk]), reverse("import-job", args=[job.pk])

    # Before its benchmark exists, the job is its creator's alone.
    assert _client(cast.researcher).get(url).status_code == 200
    assert _client(cast.researcher).get(page).status_code == 200
    assert _client(other).get(url).status_code == 404
    assert _client(other).get(page).status_code == 404

    import_job_run(job_id=job.pk)
    benchmark = Benchmark.objects.get(name="fresh")
    assert ImportJob.objects.get(pk=job.pk).benchmark == benchmark
    access_grant(benchmark=benchmark, user=viewer, role=Role.VIEWER, by=cast.researcher)
    assert _client(viewer).get(url).status_code == 200
    assert _client(other).get(url).status_code == 404
    assert _client(cast.alice).get(url).status_code == 403
    assert Client().get(url).status_code == 401


def test_an_upload_refused_for_its_size_makes_no_job_and_stores_nothing(cast: Cast, settings: Any) -> None:
    settings.IMPORT_MAX_UPLOAD_BYTES = 100
    response = _client(cast.researcher).post(
        reverse("api-benchmark-import", args=["words"]), {"file": _upload(record(), coat_record())}
    )
    assert response.status_code == 400
    assert "IMPORT_MAX_UPLOAD_BYTES=100" in response.json()["file"][0]
    assert ImportJob.objects.count() == 0
    assert not (Path(settings.MEDIA_ROOT) / "uploads").exists()


def test_a_job_whose_task_was_lost_is_failed_and_its_upload_deleted(cast: Cast, settings: Any) -> None:
    lost = import_job_create(upload=_upload(record()), benchmark_name="words", created_by=cast.researcher)
    fresh = import_job_create(upload=_upload(record()), benchmark_name="other", created_by=cast.researcher)
    alive = import_job_create(upload=_upload(record()), benchmark_name="third", created_by=cast.researcher)
    long_ago = timezone.now() - timedelta(seconds=settings.IMPORT_JOB_TIMEOUT_SECONDS + 1)
    ImportJob.objects.filter(pk__in=[lost.pk, alive.pk]).update(created_at=long_ago)
    ImportJob.objects.filter(pk=alive.pk).update(status=ImportJobStatus.RUNNING)
    cache.set(f"import-job:{alive.pk}:progress", {"done": 1, "total": None, "at": timezone.now().timestamp()})
    stored = Path(settings.MEDIA_ROOT) / lost.path

    assert import_jobs_fail_stuck() == 1

    lost.refresh_from_db()
    assert lost.status == ImportJobStatus.FAILED and "Upload it again" in lost.error["detail"]  # type: ignore[index]
    assert not stored.exists() and lost.path == ""
    statuses = dict(ImportJob.objects.values_list("pk", "status"))
    assert (statuses[fresh.pk], statuses[alive.pk]) == (ImportJobStatus.PENDING, ImportJobStatus.RUNNING)
    # A task delivered after all finds the job failed and leaves it so.
    again = import_job_run(job_id=lost.pk)
    assert again is not None and again.status == ImportJobStatus.FAILED and Label.objects.count() == 0


def test_a_lost_candidates_job_says_to_run_it_again_not_to_upload(cast: Cast, settings: Any) -> None:
    asked = ImportJob.objects.create(
        benchmark_name="words", file_name="llm:tiny", created_by=cast.researcher, parameters={"source": "llm"}
    )
    long_ago = timezone.now() - timedelta(seconds=settings.IMPORT_JOB_TIMEOUT_SECONDS + 1)
    ImportJob.objects.filter(pk=asked.pk).update(created_at=long_ago)

    assert import_jobs_fail_stuck() == 1

    asked.refresh_from_db()
    assert asked.status == ImportJobStatus.FAILED
    assert "Run it again: the targets answered are kept." in asked.error["detail"]  # type: ignore[index]
    assert "Upload" not in asked.error["detail"]  # type: ignore[index]


def test_the_job_page_names_its_creator_without_a_statement_of_its_own(cast: Cast) -> None:
    job = import_job_create(upload=_upload(record()), benchmark_name="fresh", created_by=cast.researcher)
    import_job_run(job_id=job.pk)
    viewer = make_user("vera", researcher=True)
    access_grant(benchmark=Benchmark.objects.get(name="fresh"), user=viewer, role=Role.VIEWER, by=cast.researcher)
    for reader in (cast.researcher, viewer):
        client = _client(reader)
        client.get(reverse("import-job", args=[job.pk]))
        with CaptureQueriesContext(connection) as read:
            page = client.get(reverse("import-job", args=[job.pk])).content.decode()
        assert f"by {cast.researcher.username}" in page
        assert not [query for query in read.captured_queries if 'FROM "auth_user" WHERE' in query["sql"]], (
            reader.username
        )
