"""The researcher's pages: a new benchmark form, and the upload form linked from the benchmark page."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.models import Benchmark, Candidate, ImportJob
from tests.annotation.import_helpers import coat_record, record
from tests.base import Cast

pytestmark = pytest.mark.django_db


def _client(user: object) -> Client:
    client = Client()
    client.force_login(user)  # type: ignore[arg-type]
    return client


def test_a_researcher_creates_a_benchmark_and_lands_on_its_import_page(cast: Cast) -> None:
    client = _client(cast.researcher)
    assert b"New benchmark" in client.get(reverse("benchmark-list")).content
    response = client.post(reverse("benchmark-list"), {"name": "verbs", "title": "Verbs", "scheme": "swords"})
    assert response.status_code == 302
    assert response["Location"] == reverse("benchmark-import", args=["verbs"])
    benchmark = Benchmark.objects.get(name="verbs")
    assert (benchmark.title, benchmark.created_by) == ("Verbs", cast.researcher)


def test_a_taken_or_bad_name_is_shown_on_the_form(cast: Cast) -> None:
    Benchmark.objects.create(name="verbs")
    client = _client(cast.researcher)
    response = client.post(reverse("benchmark-list"), {"name": "verbs", "scheme": "swords"})
    assert response.status_code == 400
    assert b"exists already" in response.content
    assert client.post(reverse("benchmark-list"), {"name": "two words", "scheme": "swords"}).status_code == 400
    assert Benchmark.objects.count() == 1


def test_the_benchmark_page_links_to_the_upload_form(cast: Cast) -> None:
    Benchmark.objects.create(name="verbs")
    page = _client(cast.researcher).get(reverse("benchmark-detail", args=["verbs"]))
    assert reverse("benchmark-import", args=["verbs"]).encode() in page.content


def test_uploading_a_file_goes_to_its_job_page_which_shows_the_report(
    cast: Cast, django_capture_on_commit_callbacks: Any
) -> None:
    Benchmark.objects.create(name="verbs")
    client = _client(cast.researcher)
    upload = SimpleUploadedFile("words.jsonl", (json.dumps(record()) + "\n" + json.dumps(coat_record())).encode())
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = client.post(reverse("benchmark-import", args=["verbs"]), {"file": upload, "format": "jsonl"})
    job = ImportJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("import-job", args=[job.pk])
    # Before a worker takes it: pending, the page reloading itself, nothing imported.
    waiting = client.get(response["Location"]).content.decode()
    assert 'data-status="pending"' in waiting and "data-refresh-seconds" in waiting
    assert Candidate.objects.count() == 0

    for callback in queued:
        callback()
    page = client.get(response["Location"]).content.decode()
    assert "Imported words.jsonl (jsonl)" in page
    assert "2 contexts, 2 targets, 6 candidates and 14 labels created" in page
    assert "data-refresh-seconds" not in page
    assert Candidate.objects.filter(target__benchmark__name="verbs").count() == 6
    # The import page lists the job.
    assert (
        reverse("import-job", args=[job.pk]) in client.get(reverse("benchmark-import", args=["verbs"])).content.decode()
    )


def test_a_bad_upload_shows_the_error_escaped_and_imports_nothing(
    cast: Cast, django_capture_on_commit_callbacks: Any
) -> None:
    Benchmark.objects.create(name="verbs")
    bad = record(context="<script>alert(1)</script> calm", offset=0)
    upload = SimpleUploadedFile("words.jsonl", json.dumps(bad).encode())
    client = _client(cast.researcher)
    with django_capture_on_commit_callbacks(execute=True):
        posted = client.post(reverse("benchmark-import", args=["verbs"]), {"file": upload})
    response = client.get(posted["Location"])
    assert ImportJob.objects.get().status == "failed"
    assert b'data-status="failed"' in response.content
    assert b"words.jsonl, line 1, field &#x27;offset&#x27;" in response.content
    assert b"<script>alert(1)</script>" not in response.content
    assert Candidate.objects.count() == 0


def test_annotators_cannot_open_the_upload_form(cast: Cast) -> None:
    Benchmark.objects.create(name="verbs")
    assert _client(cast.alice).get(reverse("benchmark-import", args=["verbs"])).status_code == 403
    assert _client(cast.researcher).get(reverse("benchmark-import", args=["verbs"])).status_code == 200
    assert _client(cast.researcher).get(reverse("benchmark-import", args=["nope"])).status_code == 404


def test_an_upload_above_the_size_limit_is_refused_on_the_form(cast: Cast, settings: Any) -> None:
    settings.IMPORT_MAX_UPLOAD_BYTES = 2**20
    Benchmark.objects.create(name="verbs")
    upload = SimpleUploadedFile("words.jsonl", (json.dumps(record()) + "\n").encode() * 3000)
    response = _client(cast.researcher).post(reverse("benchmark-import", args=["verbs"]), {"file": upload})
    assert response.status_code == 400
    assert b"The file is 1.1 MiB; uploads are limited to 1.0 MiB (IMPORT_MAX_UPLOAD_BYTES=1048576)" in response.content
    assert Candidate.objects.count() == 0
