"""Importing the file last imported under an origin again: answered from its SHA-256 without
reading it or writing a row, while any other file (one label more, a row fewer, another benchmark,
rows gone since) is imported in full (docs/design.md §2)."""

from __future__ import annotations

import gzip
import io
import json
import re
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.importers import ImportFailed, ImportReport
from annotation.models import Activity, Benchmark, BenchmarkChanges, BenchmarkChangeTargets, Import, Label
from annotation.services import benchmark_import
from tests.annotation.import_helpers import FIXTURES, coat_record, record, snapshot, write_jsonl

pytestmark = pytest.mark.django_db

SWORDS = FIXTURES / "swords_small.json"
TSAR = FIXTURES / "tsar2022" / "tsar2022_en_trial_gold.tsv"
# Statements a re-import of an unchanged file may run: look the import up, lock the benchmark,
# read the import again, count its rows, log the activity, and the savepoint around them.
MOST_STATEMENTS = 8
# Every table a statement writes, a common table expression's included (an upsert's ``DO UPDATE``
# and a lock's ``FOR [NO KEY] UPDATE`` name no table).
_WRITE = re.compile(
    r"\b(?:INSERT\s+INTO|(?<!DO )(?<!FOR )(?<!KEY )UPDATE|DELETE\s+FROM|COPY)\s+\"?(?P<table>\w+)", re.IGNORECASE
)


def _file(tmp_path: Path, kind: str) -> tuple[Path, str]:
    if kind == "jsonl-repeats":
        # A target named twice, a candidate named twice, a context spelled twice over.
        respaced = record(context=record()["context"].replace(" ", "  ", 1))
        respaced["offset"] = respaced["context"].index("calm")
        lines = [record(), coat_record(), record(candidates=[{"text": "still", "labels": ["reject"]}]), respaced]
        return write_jsonl(tmp_path / "words.jsonl", lines), "auto"
    source = {"swords": SWORDS, "prolex": FIXTURES / "prolex_small.csv", "sws": FIXTURES / "sws_small.json"}
    if kind == "tsar":
        source = {"tsar": TSAR}
    path = tmp_path / source[kind].name
    shutil.copyfile(source[kind], path)
    if kind == "swords":
        # Gzipped, as the release is.
        gzipped = path.with_name(path.name + ".gz")
        gzipped.write_bytes(gzip.compress(path.read_bytes()))
        return gzipped, "auto"
    return path, {"prolex": "prolex", "sws": "sws", "tsar": "tsar"}[kind]


def _written_tables(queries: list[dict[str, Any]]) -> set[str]:
    return {found["table"] for query in queries for found in _WRITE.finditer(query["sql"])}


def _figures(report: ImportReport) -> dict[str, Any]:
    return {key: value for key, value in asdict(report).items() if key not in {"seconds", "unchanged"}}


@pytest.mark.production_database("pins the statements as PostgreSQL runs them: SQLite moves a change key in several")
@pytest.mark.parametrize("kind", ["swords", "prolex", "sws", "tsar", "jsonl-repeats"])
def test_the_same_file_again_is_answered_from_its_hash_as_a_full_reimport_would_answer(
    tmp_path: Path, kind: str
) -> None:
    path, fmt = _file(tmp_path, kind)
    benchmark_import(path_or_file=path, benchmark_name="bench", fmt=fmt)
    before = snapshot()

    with CaptureQueriesContext(connection) as queries:
        quick = benchmark_import(path_or_file=path, benchmark_name="bench", fmt=fmt)

    assert quick.unchanged and not quick.changed
    assert len(queries) <= MOST_STATEMENTS, [query["sql"] for query in queries]
    # Only the log's entry, and the change key every entry moves with what it touched (docs/design.md §7).
    assert _written_tables(queries.captured_queries) == {
        Activity._meta.db_table,
        BenchmarkChanges._meta.db_table,
        BenchmarkChangeTargets._meta.db_table,
    }
    assert snapshot() == before
    # Forget the hash: the full re-import reads the file and must report the very same figures.
    Import.objects.update(file_sha256="")
    full = benchmark_import(path_or_file=path, benchmark_name="bench", fmt=fmt)
    assert not full.unchanged and not full.changed
    assert _figures(quick) == _figures(full)
    assert snapshot() == before


def test_a_file_with_one_label_more_is_imported_and_then_answered_from_its_hash(tmp_path: Path) -> None:
    path = tmp_path / SWORDS.name
    shutil.copyfile(SWORDS, path)
    benchmark_import(path_or_file=path, benchmark_name="bench")
    data = json.loads(path.read_text())
    substitute = next(iter(data["substitute_labels"]))
    data["substitute_labels"][substitute].append("UNSURE")
    path.write_text(json.dumps(data, indent=2))

    longer = benchmark_import(path_or_file=path, benchmark_name="bench")

    assert not longer.unchanged and longer.labels.created == 1
    last = len(data["substitute_labels"][substitute]) - 1
    label = Label.objects.get(candidate__external_id=substitute, position=last)
    assert (label.value, label.raw_value, label.origin) == ("abstain", "UNSURE", path.name)
    again = benchmark_import(path_or_file=path, benchmark_name="bench")
    assert again.unchanged and again.labels.skipped == longer.labels.created + longer.labels.skipped


def test_a_file_with_one_label_changed_is_still_refused_naming_the_label(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "words.jsonl", [record()])
    benchmark_import(path_or_file=path, benchmark_name="bench")
    before = snapshot()
    changed = record()
    changed["candidates"][0]["labels"][0] = "reject"
    write_jsonl(path, [changed])

    with pytest.raises(ImportFailed, match=r"words.jsonl, line 1, field 'labels': label 1 of candidate 'still'"):
        benchmark_import(path_or_file=path, benchmark_name="bench")
    assert snapshot() == before


def test_a_file_with_a_row_removed_is_imported_in_full_and_the_import_keeps_what_it_brought(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "words.jsonl", [record(), coat_record()])
    benchmark_import(path_or_file=path, benchmark_name="bench")
    before = snapshot()
    write_jsonl(path, [record()])

    shorter = benchmark_import(path_or_file=path, benchmark_name="bench")

    # An import adds and never removes (removing is import_delete's): the coat stays.
    assert not shorter.unchanged and not shorter.changed
    assert (shorter.targets.skipped, shorter.candidates.skipped) == (1, 3)
    assert snapshot() == before
    assert benchmark_import(path_or_file=path, benchmark_name="bench").unchanged


def test_the_same_file_into_another_benchmark_or_under_another_origin_is_imported_in_full(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "words.jsonl", [record(), coat_record()])
    first = benchmark_import(path_or_file=path, benchmark_name="first")

    other = benchmark_import(path_or_file=path, benchmark_name="second")
    assert not other.unchanged and other.labels.created == first.labels.created > 0
    assert Label.objects.filter(candidate__target__benchmark__name="second").count() == first.labels.created
    # The same labels under another name would count twice: refused as any such file is.
    with pytest.raises(ImportFailed, match="would count them twice"):
        benchmark_import(path_or_file=path, benchmark_name="first", origin="copy.jsonl")


def test_rows_of_the_import_gone_since_are_imported_again(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "words.jsonl", [record(), coat_record()])
    benchmark_import(path_or_file=path, benchmark_name="bench")
    before = sorted(Label.objects.values_list("candidate_id", "value", "position", "origin"))
    Label.objects.filter(candidate__normalized="chose", position=2).delete()

    again = benchmark_import(path_or_file=path, benchmark_name="bench")

    assert not again.unchanged and again.labels.created == 1
    assert sorted(Label.objects.values_list("candidate_id", "value", "position", "origin")) == before


def test_an_uploaded_file_object_is_answered_from_its_hash(tmp_path: Path) -> None:
    content = write_jsonl(tmp_path / "words.jsonl", [record(), coat_record()]).read_bytes()
    upload = io.BytesIO(content)
    upload.name = "words.jsonl"
    benchmark_import(path_or_file=upload, benchmark_name="bench")
    upload.seek(0)
    again = benchmark_import(path_or_file=upload, benchmark_name="bench")
    assert again.unchanged


def test_file_facts_another_file_replaced_come_back_with_the_unchanged_file(tmp_path: Path) -> None:
    path = tmp_path / SWORDS.name
    shutil.copyfile(SWORDS, path)
    benchmark_import(path_or_file=path, benchmark_name="bench")
    benchmark = Benchmark.objects.get(name="bench")
    benchmark.extra = {"swords": {"substitutes_lemmatized": False}}
    benchmark.save(update_fields=["extra"])

    again = benchmark_import(path_or_file=path, benchmark_name="bench")

    assert again.unchanged and again.updated == 1 and again.warnings
    benchmark.refresh_from_db()
    assert benchmark.extra == {"swords": {"substitutes_lemmatized": True}}
