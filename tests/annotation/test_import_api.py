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

from annotation.models import Benchmark
from tests.annotation.import_helpers import FIXTURES, coat_record, record, row_counts
from tests.base import Cast

pytestmark = pytest.mark.django_db


def _jsonl(*records: dict[str, object], name: str = "words.jsonl") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, "".join(json.dumps(r) + "\n" for r in records).encode())


def _client(user: object) -> Client:
    client = Client()
    client.force_login(user)  # type: ignore[arg-type]
    return client


def test_a_researcher_imports_a_file_and_gets_the_report(cast: Cast) -> None:
    response = _client(cast.researcher).post(
        reverse("api-benchmark-import", args=["words"]), {"file": _jsonl(record(), coat_record()), "format": "auto"}
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["benchmark"], body["origin"], body["format"]) == ("words", "words.jsonl", "jsonl")
    assert body["benchmark_created"] is True
    assert body["candidates"] == {"created": 6, "merged": 0, "skipped": 0}
    assert Benchmark.objects.get(name="words").created_by == cast.researcher


def test_the_api_imports_gzipped_swords_with_an_origin(cast: Cast) -> None:
    upload = SimpleUploadedFile("release.json.gz", (FIXTURES / "swords_small.json.gz").read_bytes())
    response = _client(cast.researcher).post(
        reverse("api-benchmark-import", args=["sw"]), {"file": upload, "format": "swords", "origin": "release-1"}
    )
    assert response.status_code == 200, response.content
    assert response.json()["labels"]["created"] == 55
    assert response.json()["origin"] == "release-1"


def test_a_bad_file_gets_400_with_the_message(cast: Cast) -> None:
    upload = SimpleUploadedFile("words.jsonl.gz", gzip.compress(json.dumps(record(offset=3)).encode()))
    response = _client(cast.researcher).post(reverse("api-benchmark-import", args=["words"]), {"file": upload})
    assert response.status_code == 400
    body = response.json()
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


def test_researchers_list_benchmarks_and_read_their_counts(cast: Cast) -> None:
    client = _client(cast.researcher)
    client.post(reverse("api-benchmark-import", args=["words"]), {"file": _jsonl(record(), coat_record())})

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


def test_a_large_upload_is_read_from_its_temporary_file(
    cast: Cast, settings: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.core.files.uploadedfile import TemporaryUploadedFile

    from annotation import api

    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0  # type: ignore[attr-defined]
    given: list[object] = []
    real = api.benchmark_import

    def spy(**kwargs: object) -> object:
        given.append(kwargs["path_or_file"])
        return real(**kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(api, "benchmark_import", spy)
    upload = SimpleUploadedFile("release.json.gz", (FIXTURES / "swords_small.json.gz").read_bytes())
    response = _client(cast.researcher).post(reverse("api-benchmark-import", args=["sw"]), {"file": upload})
    assert response.status_code == 200, response.content
    assert isinstance(given[0], TemporaryUploadedFile)
    assert response.json()["labels"]["created"] == 55


def test_an_upload_above_the_size_limit_is_a_400_and_the_command_has_no_limit(
    cast: Cast, settings: Any, tmp_path: Path
) -> None:
    settings.IMPORT_MAX_UPLOAD_BYTES = 2**20
    content = (json.dumps(record()) + "\n").encode() * 3000
    upload = SimpleUploadedFile("words.jsonl", content)
    response = _client(cast.researcher).post(reverse("api-benchmark-import", args=["words"]), {"file": upload})
    assert response.status_code == 400
    assert "(IMPORT_MAX_UPLOAD_BYTES)" in response.json()["file"][0]
    assert row_counts()["benchmarks"] == 0

    path = tmp_path / "words.jsonl"
    path.write_bytes(content)
    call_command("import_benchmark", str(path), "--benchmark", "words", stdout=io.StringIO())
    assert row_counts()["candidates"] == 3
