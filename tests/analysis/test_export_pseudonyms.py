"""Exports name workers by stable per-benchmark pseudonyms unless raw ids are asked for."""

from __future__ import annotations

import csv
import io
import json
import logging
from pathlib import Path

import pytest
from django.core.management import call_command

from analysis import services
from analysis.models import ExportJob
from annotation.models import Benchmark
from tests.analysis.labelled import labelled_benchmark

pytestmark = pytest.mark.django_db

WORKERS = ["alice", "bob", "carol"]


def _benchmark(name: str) -> Benchmark:
    return labelled_benchmark(name, [("ran", "verb", [("walked", ["thesaurus"], "ARA")])], workers=WORKERS)


def _export(benchmark: Benchmark, format: str, *, raw_workers: bool = False) -> str:
    out = io.StringIO()
    services.benchmark_export(benchmark=benchmark, format=format, out=out, raw_workers=raw_workers)
    return out.getvalue()


def _workers(text: str) -> list[str]:
    return [row["worker"] for row in csv.DictReader(io.StringIO(text))]


def test_the_labels_table_names_workers_by_pseudonyms_stable_across_exports() -> None:
    benchmark = _benchmark("pseudonymous")

    first, again = _workers(_export(benchmark, "labels-csv")), _workers(_export(benchmark, "labels-csv"))

    assert first == again
    assert len(set(first)) == 3
    assert all(name.startswith("w-") for name in first)
    assert not any(worker in _export(benchmark, "labels-csv") for worker in WORKERS)


def test_two_benchmarks_give_the_same_worker_unlinkable_pseudonyms() -> None:
    one, two = _benchmark("first"), _benchmark("second")

    assert set(_workers(_export(one, "labels-csv"))).isdisjoint(_workers(_export(two, "labels-csv")))


def test_the_stats_export_names_workers_by_the_same_pseudonyms_without_their_ids() -> None:
    benchmark = _benchmark("stats-pseudonyms")

    document = json.loads(_export(benchmark, "stats"))

    rows = document["agreement"]["worker_agreement"]
    assert {row["worker"] for row in rows} == set(_workers(_export(benchmark, "labels-csv")))
    assert all("worker_id" not in row for row in rows)


def test_raw_worker_ids_are_exported_only_when_asked_and_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    benchmark = _benchmark("raw")

    with caplog.at_level(logging.WARNING, logger="analysis.services.exports"):
        names = _workers(_export(benchmark, "labels-csv", raw_workers=True))

    assert names == ["imported:alice", "imported:bob", "imported:carol"]
    assert "raw worker ids" in caplog.text


def test_labels_imported_without_workers_stay_without() -> None:
    benchmark = labelled_benchmark("anonymous", [("ran", "verb", [("walked", ["thesaurus"], "AR")])])

    assert _workers(_export(benchmark, "labels-csv")) == ["", ""]


def test_an_export_job_with_raw_ids_says_so_in_its_file_name() -> None:
    benchmark = _benchmark("raw-job")

    job = services.export_job_create(benchmark=benchmark, format="labels-csv", raw_workers=True)

    assert ExportJob.objects.get(pk=job.pk).raw_workers
    assert "raw-worker-ids" in job.path


def test_the_command_refuses_raw_ids_in_a_file_not_named_for_them(tmp_path: Path) -> None:
    benchmark = _benchmark("raw-command")
    named = tmp_path / "raw-command-raw-worker-ids.csv"

    with pytest.raises(Exception, match="raw-worker-ids"):
        call_command(
            "export_benchmark",
            benchmark.name,
            "--format",
            "labels-csv",
            "--output",
            str(tmp_path / "x.csv"),
            "--raw-worker-ids",
        )
    call_command(
        "export_benchmark", benchmark.name, "--format", "labels-csv", "--output", str(named), "--raw-worker-ids"
    )

    assert "imported:alice" in named.read_text()
