"""The benchmark REST API: list, detail with counts, and import (researchers only)."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.models import Benchmark, ImportJob
from tests.annotation.import_helpers import FIXTURES, api_import, coat_record, record, row_counts
from tests.base import Cast

pytestmark = pytest.mark.django_db


def _jsonl(*records: dict[str, object], name: str = "words.jsonl") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, "".join(json.dumps(r) + "\n" for r in records).encode())


def _client(user: object) -> Client:
    client = Client()
    client.force_login(user)  # type: ignore[arg-type]
    return client


def test_a_researcher_imports_a_file_and_gets_the_report(cast: Cast, django_capture_on_commit_callbacks: Any) -> None:
    response, job = api_import(
        _client(cast.researcher),
        "words",
        {"file": _jsonl(record(), coat_record()), "format": "auto"},
        django_capture_on_commit_callbacks,
    )
    # 202 at once, pointing at the job; the job, run, holds the report.
    assert response.json()["status"] == "pending"
    assert response["Location"] == response.json()["url"]
    assert job["status"] == "done" and job["error"] is None
    body = job["report"]
    assert (body["benchmark"], body["origin"], body["format"]) == ("words", "words.jsonl", "jsonl")
    assert body["benchmark_created"] is True
    assert body["candidates"] == {"created": 6, "merged": 0, "skipped": 0}
    assert Benchmark.objects.get(name="words").created_by == cast.researcher


def test_the_api_imports_gzipped_swords_with_an_origin(cast: Cast, django_capture_on_commit_callbacks: Any) -> None:
    upload = SimpleUploadedFile("release.json.gz", (FIXTURES / "swords_small.json.gz").read_bytes())
    _, job = api_import(
        _client(cast.researcher),
        "sw",
        {"file": upload, "format": "swords", "origin": "release-1"},
        django_capture_on_commit_callbacks,
    )
    assert job["report"]["labels"]["created"] == 55
    assert job["report"]["origin"] == "release-1"


def test_a_bad_file_fails_its_job_with_the_message(cast: Cast, django_capture_on_commit_callbacks: Any) -> None:
    upload = SimpleUploadedFile("words.jsonl.gz", gzip.compress(json.dumps(record(offset=3)).encode()))
    _, job = api_import(_client(cast.researcher), "words", {"file": upload}, django_capture_on_commit_callbacks)
    assert job["status"] == "failed" and job["report"] is None
    body = job["error"]
    assert body["detail"].startswith("words.jsonl.gz, line 1, field 'offset': offset 3 does not point at 'calm'")
    assert (body["file"], body["line"], body["field"]) == ("words.jsonl.gz", 1, "offset")
    assert row_counts()["benchmarks"] == 0


def test_an_import_without_a_file_is_a_400(cast: Cast) -> None:
    response = _client(cast.researcher).post(reverse("api-benchmark-import", args=["words"]), {"format": "csv"})
    assert response.status_code == 400
    assert "file" in response.json()


def test_annotators_and_strangers_may_not_import(cast: Cast) -> None:
    url = reverse("api-benchmark-import", args=["words"])
    assert _client(cast.alice).post(url, {"file": _jsonl(record())}).status_code == 403
    assert Client().post(url, {"file": _jsonl(record())}).status_code in (401, 403)
    assert row_counts()["benchmarks"] == 0


def test_researchers_list_benchmarks_and_read_their_counts(cast: Cast, django_capture_on_commit_callbacks: Any) -> None:
    client = _client(cast.researcher)
    api_import(client, "words", {"file": _jsonl(record(), coat_record())}, django_capture_on_commit_callbacks)

    listing = client.get(reverse("api-benchmark-list"))
    assert listing.status_code == 200
    [item] = listing.json()["results"]
    assert (item["name"], item["target_count"], item["scheme"]) == ("words", 2, "swords")

    detail = client.get(reverse("api-benchmark-detail", args=["words"]))
    assert detail.status_code == 200
    assert detail.json()["counts"] == {"contexts": 2, "targets": 2, "candidates": 6, "labels": 14}
    assert detail.json()["scheme_settings"] == {}
    assert client.get(reverse("api-benchmark-detail", args=["nope"])).status_code == 404


def test_annotators_may_not_read_benchmarks(cast: Cast) -> None:
    Benchmark.objects.create(name="words")
    client = _client(cast.bob)
    assert client.get(reverse("api-benchmark-list")).status_code == 403
    assert client.get(reverse("api-benchmark-detail", args=["words"])).status_code == 403


def test_the_schema_describes_the_import_endpoint(cast: Cast) -> None:
    response = _client(cast.researcher).get(reverse("api-schema"))
    assert response.status_code == 200
    assert b"/api/benchmarks/{name}/import" in response.content


def test_a_large_upload_is_copied_from_its_temporary_file_and_the_copy_deleted_once_read(
    cast: Cast, settings: Any, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    from django.core.files.uploadedfile import TemporaryUploadedFile

    from annotation.importers import jobs

    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0
    given: list[object] = []
    real = jobs.import_job_create

    def spy(**kwargs: Any) -> Any:
        given.append(kwargs["upload"])
        return real(**kwargs)

    monkeypatch.setattr("annotation.api.import_job_create", spy)
    upload = SimpleUploadedFile("release.json.gz", (FIXTURES / "swords_small.json.gz").read_bytes())
    client = _client(cast.researcher)
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = client.post(reverse("api-benchmark-import", args=["sw"]), {"file": upload})
    assert response.status_code == 202, response.content
    assert isinstance(given[0], TemporaryUploadedFile)
    stored = Path(settings.MEDIA_ROOT) / ImportJob.objects.get().path
    assert stored.read_bytes() == (FIXTURES / "swords_small.json.gz").read_bytes()

    for callback in queued:
        callback()
    job = client.get(response.json()["url"]).json()
    assert job["report"]["labels"]["created"] == 55
    assert not stored.exists() and ImportJob.objects.get().path == ""


def test_an_upload_above_the_size_limit_is_a_400_and_the_command_has_no_limit(
    cast: Cast, settings: Any, tmp_path: Path
) -> None:
    settings.IMPORT_MAX_UPLOAD_BYTES = 2**20
    content = (json.dumps(record()) + "\n").encode() * 3000
    upload = SimpleUploadedFile("words.jsonl", content)
    response = _client(cast.researcher).post(reverse("api-benchmark-import", args=["words"]), {"file": upload})
    assert response.status_code == 400
    assert "(IMPORT_MAX_UPLOAD_BYTES=" in response.json()["file"][0]
    assert row_counts()["benchmarks"] == 0

    path = tmp_path / "words.jsonl"
    path.write_bytes(content)
    call_command("import_benchmark", str(path), "--benchmark", "words", stdout=io.StringIO())
    assert row_counts()["candidates"] == 3
