"""No label is counted twice: the same labels under another origin are refused unless declared a new label set."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client, TestCase
from django.urls import reverse

from annotation.models import Benchmark, Candidate, Import, Label
from annotation.selectors import benchmark_counts
from annotation.services import ImportFailed, LabelOverlap, benchmark_import
from tests.annotation.import_helpers import FIXTURES, coat_record, record, snapshot, write_csv, write_jsonl
from tests.base import Cast

pytestmark = pytest.mark.django_db

PLAIN = FIXTURES / "swords_small.json"
GZIPPED = FIXTURES / "swords_small.json.gz"
SMALL_COUNTS = {"contexts": 4, "targets": 3, "candidates": 9, "labels": 55}


def _counts() -> dict[str, int]:
    return benchmark_counts(benchmark=Benchmark.objects.get(name="swords"))


def test_the_same_swords_labels_unzipped_under_another_origin_are_refused_naming_the_first() -> None:
    benchmark_import(path_or_file=GZIPPED, benchmark_name="swords")
    before = snapshot()

    with pytest.raises(ImportFailed) as refused:
        benchmark_import(path_or_file=PLAIN, benchmark_name="swords")

    message = str(refused.value)
    assert message.startswith("swords_small.json, field 'labels': the same candidates already hold labels")
    assert "'swords_small.json.gz' (9 candidates)" in message
    assert "new label set" in message
    assert snapshot() == before
    assert _counts() == SMALL_COUNTS
    assert list(Import.objects.values_list("origin", flat=True)) == ["swords_small.json.gz"]


def test_the_same_file_under_the_same_origin_stays_a_no_op() -> None:
    benchmark_import(path_or_file=GZIPPED, benchmark_name="swords")
    before = snapshot()
    again = benchmark_import(path_or_file=GZIPPED, benchmark_name="swords")
    assert not again.changed
    assert again.label_overlaps == []
    assert snapshot() == before


def test_the_same_labels_in_another_format_are_recognised(tmp_path: Path) -> None:
    benchmark_import(path_or_file=write_jsonl(tmp_path / "words.jsonl", [record(), coat_record()]), benchmark_name="b")
    with pytest.raises(ImportFailed, match=r"'words.jsonl' \(5 candidates\)"):
        benchmark_import(path_or_file=write_csv(tmp_path / "words.csv", [record(), coat_record()]), benchmark_name="b")
    assert Label.objects.count() == 14


def test_a_partial_overlap_is_refused_with_the_number_of_candidates_it_shares(tmp_path: Path) -> None:
    benchmark_import(path_or_file=write_jsonl(tmp_path / "a.jsonl", [record()]), benchmark_name="b")
    # A respaced context, a recased candidate: still the same candidate, beside one that is new.
    respaced = "The river  was calm after the storm. By evening the boats drifted home."
    more = record(
        context=respaced,
        offset=respaced.index("calm"),
        candidates=[{"text": "SERENE", "labels": ["accept"]}, {"text": "tranquil", "labels": ["accept"]}],
    )
    with pytest.raises(ImportFailed, match=r"'a.jsonl' \(1 candidate\)\. Importing these labels as 'b.jsonl'"):
        benchmark_import(path_or_file=write_jsonl(tmp_path / "b.jsonl", [more]), benchmark_name="b")
    assert not Candidate.objects.filter(normalized="tranquil").exists()


def test_candidates_without_labels_under_another_origin_are_no_overlap(tmp_path: Path) -> None:
    benchmark_import(path_or_file=write_jsonl(tmp_path / "a.jsonl", [record()]), benchmark_name="b")
    more = record(candidates=[{"text": "still", "sources": ["model"]}, {"text": "tranquil", "labels": ["accept"]}])
    report = benchmark_import(path_or_file=write_jsonl(tmp_path / "b.jsonl", [more]), benchmark_name="b")
    assert (report.candidates.created, report.labels.created, report.label_overlaps) == (1, 1, [])


def test_labels_declared_a_new_label_set_are_added_beside_the_earlier_origin() -> None:
    benchmark_import(path_or_file=GZIPPED, benchmark_name="swords")

    report = benchmark_import(path_or_file=PLAIN, benchmark_name="swords", origin="second-look", new_label_set=True)

    assert report.label_overlaps == [LabelOverlap(origin="swords_small.json.gz", candidates=9)]
    assert "labels added as a new label set beside 'swords_small.json.gz' (9 candidates)" in report.summary()
    assert _counts() == {**SMALL_COUNTS, "labels": 110}
    assert dict(Import.objects.values_list("origin", "new_label_set")) == {
        "swords_small.json.gz": False,
        "second-look": True,
    }


def test_a_new_label_set_beside_nothing_is_an_ordinary_import() -> None:
    report = benchmark_import(path_or_file=PLAIN, benchmark_name="swords", new_label_set=True)
    assert report.label_overlaps == []
    assert "new label set" not in report.summary()
    assert not Import.objects.get().new_label_set


def test_the_command_refuses_the_same_labels_and_takes_new_label_set() -> None:
    out = io.StringIO()
    call_command("import_benchmark", str(GZIPPED), "--benchmark", "swords", stdout=out)
    with pytest.raises(CommandError, match=r"'swords_small.json.gz' \(9 candidates\)"):
        call_command("import_benchmark", str(PLAIN), "--benchmark", "swords", stdout=out)
    call_command("import_benchmark", str(PLAIN), "--benchmark", "swords", "--new-label-set", stdout=out)
    assert "labels added as a new label set beside 'swords_small.json.gz'" in out.getvalue()
    assert _counts()["labels"] == 110


def test_the_api_refuses_the_same_labels_and_takes_new_label_set(cast: Cast) -> None:
    client = Client()
    client.force_login(cast.researcher)
    url = reverse("api-benchmark-import", args=["swords"])

    def upload(path: Path) -> SimpleUploadedFile:
        return SimpleUploadedFile(path.name, path.read_bytes())

    def imported(data: dict[str, Any]) -> dict[str, Any]:
        with TestCase.captureOnCommitCallbacks(execute=True):  # the import job runs after the request
            response = client.post(url, data)
        assert response.status_code == 202, response.content
        job: dict[str, Any] = client.get(response.json()["url"]).json()
        return job

    assert imported({"file": upload(GZIPPED)})["status"] == "done"
    refused = imported({"file": upload(PLAIN)})
    assert refused["status"] == "failed"
    assert (refused["error"]["field"], refused["error"]["file"]) == ("labels", "swords_small.json")
    assert "'swords_small.json.gz' (9 candidates)" in refused["error"]["detail"]

    added = imported({"file": upload(PLAIN), "new_label_set": "true"})
    assert added["status"] == "done", added
    body = added["report"]
    assert body["new_label_set"] is True
    assert body["label_overlaps"] == [{"origin": "swords_small.json.gz", "candidates": 9}]


def test_the_upload_page_refuses_the_same_labels_and_says_beside_which_a_new_set_was_added(cast: Cast) -> None:
    benchmark_import(path_or_file=GZIPPED, benchmark_name="swords")
    client = Client()
    client.force_login(cast.researcher)
    url = reverse("benchmark-import", args=["swords"])
    data = PLAIN.read_bytes()

    with TestCase.captureOnCommitCallbacks(execute=True):  # the import job runs after the request
        posted = client.post(url, {"file": SimpleUploadedFile("swords_small.json", data)})
    refused = client.get(posted["Location"])
    assert b'data-status="failed"' in refused.content
    assert b"the same candidates already hold labels" in refused.content

    with TestCase.captureOnCommitCallbacks(execute=True):
        posted = client.post(
            url,
            {"file": SimpleUploadedFile("swords_small.json", data), "origin": "second-look", "new_label_set": "on"},
        )
    added = client.get(posted["Location"])
    assert b"added as a new label set beside swords_small.json.gz (9 candidates)" in added.content
    assert b"second-look" in added.content and b"a new label set" in added.content
    assert _counts()["labels"] == 110
