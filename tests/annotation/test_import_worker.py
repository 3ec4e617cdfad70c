"""An import job runs in a real Celery worker: the request returns at once, the worker imports the
stored upload in its own transaction and deletes it, and the job tells the outcome."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.models import Candidate, ImportJob, Label
from tests.annotation.import_helpers import coat_record, record
from tests.base import Cast
from tests.celery_worker import running_worker, tasks_sent_to

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

JOB_SECONDS = 90


@pytest.fixture
def celery_queue(redis_url: str, tmp_path: Path, settings: Any) -> Iterator[str]:
    """A real worker on a queue of its own, reading uploads from this test's MEDIA_ROOT."""
    queue = f"test-import-{uuid.uuid4().hex[:12]}"
    environment = {"MEDIA_ROOT": str(settings.MEDIA_ROOT)}
    with (
        tasks_sent_to(redis_url, queue),
        running_worker(redis_url=redis_url, queue=queue, log_path=tmp_path / "w.log", environment=environment),
    ):
        yield queue


def _finished(client: Client, url: str) -> dict[str, Any]:
    deadline = time.monotonic() + JOB_SECONDS
    while time.monotonic() < deadline:
        job: dict[str, Any] = client.get(url).json()
        if job["status"] in ("done", "failed"):
            return job
        time.sleep(0.3)
    pytest.fail(f"the worker did not finish the import job in {JOB_SECONDS} s")


def test_a_real_worker_imports_the_stored_upload_and_the_job_tells_the_outcome(
    cast: Cast, celery_queue: str, settings: Any
) -> None:
    client = Client()
    client.force_login(cast.researcher)
    lines = json.dumps(record()) + "\n" + json.dumps(coat_record()) + "\n"
    response = client.post(
        reverse("api-benchmark-import", args=["words"]), {"file": SimpleUploadedFile("words.jsonl", lines.encode())}
    )
    assert response.status_code == 202, response.content
    stored = Path(settings.MEDIA_ROOT) / ImportJob.objects.get().path
    assert stored.is_file() or ImportJob.objects.get().status != "pending"

    job = _finished(client, response.json()["url"])

    assert job["status"] == "done", job["error"]
    assert job["report"]["candidates"]["created"] == 6 and job["report"]["labels"]["created"] == 14
    assert Candidate.objects.filter(target__benchmark__name="words").count() == 6
    assert not stored.exists() and ImportJob.objects.get().path == ""
    # The job now hangs off the benchmark it created: its page shows the report.
    assert ImportJob.objects.get().benchmark is not None
    page = client.get(response.json()["page"]).content.decode()
    assert "6 candidates and 14 labels created" in page

    # A bad file fails its job with file, line and field, and nothing of it is kept.
    bad = json.dumps(record(context="A new context.", offset=40)) + "\n"
    response = client.post(
        reverse("api-benchmark-import", args=["words"]), {"file": SimpleUploadedFile("bad.jsonl", bad.encode())}
    )
    assert response.status_code == 202, response.content
    failed = _finished(client, response.json()["url"])
    assert failed["status"] == "failed"
    assert (failed["error"]["file"], failed["error"]["line"], failed["error"]["field"]) == ("bad.jsonl", 1, "offset")
    assert Label.objects.count() == 14
    assert not any((Path(settings.MEDIA_ROOT) / "uploads").iterdir())
