"""The management commands: import_benchmark and benchmark_stats."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Benchmark, Label
from annotation.selectors import benchmark_counts
from tests.annotation.import_helpers import FIXTURES, coat_record, record, row_counts, write_jsonl

pytestmark = pytest.mark.django_db


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_import_benchmark_creates_the_benchmark_and_prints_the_report(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "words.jsonl", [record(), coat_record()])
    output = _run("import_benchmark", str(path), "--benchmark", "words")
    assert "Imported words.jsonl (jsonl) into words" in output
    assert "candidates created        6" in output
    assert benchmark_counts(benchmark=Benchmark.objects.get(name="words"))["targets"] == 2


def test_import_benchmark_takes_a_format_and_prints_json(tmp_path: Path) -> None:
    output = _run(
        "import_benchmark", str(FIXTURES / "swords_small.json.gz"), "--benchmark", "sw", "--format", "swords", "--json"
    )
    report = json.loads(output)
    assert (report["format"], report["labels"]["created"], report["id_mismatch_count"]) == ("swords", 55, 0)


def test_import_benchmark_fails_with_the_message_and_writes_nothing(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "words.jsonl", [record(pos="article")])
    with pytest.raises(CommandError, match=r"words.jsonl, line 1, field 'pos': unknown part of speech 'article'"):
        _run("import_benchmark", str(path), "--benchmark", "words")
    assert row_counts()["benchmarks"] == 0


def test_import_benchmark_refuses_an_unknown_format_choice(tmp_path: Path) -> None:
    with pytest.raises(CommandError):
        _run("import_benchmark", str(tmp_path / "x.xml"), "--benchmark", "words", "--format", "xml")


def test_benchmark_stats_prints_the_counts_as_json() -> None:
    _run("import_benchmark", str(FIXTURES / "swords_small.json"), "--benchmark", "sw")
    stats = json.loads(_run("benchmark_stats", "sw", "--json"))
    # The analysis extends the command; the counts are its first four keys.
    assert {key: stats[key] for key in ("contexts", "targets", "candidates", "labels")} == {
        "contexts": 4,
        "targets": 3,
        "candidates": 9,
        "labels": 55,
    }
    assert "labels" in _run("benchmark_stats", "sw")


def test_benchmark_stats_names_an_unknown_benchmark() -> None:
    with pytest.raises(CommandError, match="no benchmark named 'nope'"):
        _run("benchmark_stats", "nope", "--json")


def test_a_file_name_that_is_not_utf8_is_shown_escaped_and_an_origin_that_is_not_text_is_refused(
    tmp_path: Path,
) -> None:
    # Python hands the undecodable byte 0xe9 of a file name over as the lone surrogate \udce9.
    path = write_jsonl(tmp_path / "caf\udce9.jsonl", [record()])
    assert "Imported caf\\udce9.jsonl (jsonl)" in _run("import_benchmark", str(path), "--benchmark", "words")
    assert set(Label.objects.values_list("origin", flat=True)) == {"caf\\udce9.jsonl"}
    with pytest.raises(CommandError, match=r"field 'origin': contains a lone surrogate '\\udce9'"):
        _run("import_benchmark", str(path), "--benchmark", "words", "--origin", "caf\udce9")
