"""Our JSONL and CSV formats: what is stored, round trips, idempotence and the merge rules."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.importers import service, writer
from annotation.models import Benchmark, Candidate, Context, Label, Target
from annotation.services import ImportFailed, benchmark_import
from tests.annotation.import_helpers import (
    COAT,
    RIVER,
    coat_record,
    record,
    row_counts,
    snapshot,
    stored_records,
    write_csv,
    write_jsonl,
)

pytestmark = pytest.mark.django_db


def test_a_jsonl_file_is_stored_with_sources_sorted_and_labels_in_order(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "words.jsonl", [record(), coat_record()])
    report = benchmark_import(path_or_file=path, benchmark_name="bench")

    assert report.format == "jsonl"
    assert report.benchmark_created
    assert (report.contexts.created, report.targets.created, report.candidates.created) == (2, 2, 6)
    assert report.labels.created == 5 + 9
    target = Target.objects.get(word="calm")
    assert (target.offset, target.pos, target.lemma, target.stage) == (14, "adj", "calm", "reduce")
    assert target.context.text[target.offset : target.offset + len(target.word)] == target.word
    still = Candidate.objects.get(target=target, text="still")
    assert still.sources == ["coinco", "thesaurus"]
    labels = list(still.labels.order_by("position").values_list("value", "raw_value", "position", "step", "origin"))
    assert labels == [
        ("accept", "accept", 0, 2, "words.jsonl"),
        ("reject", "reject", 1, 2, "words.jsonl"),
        ("accept", "accept", 2, 2, "words.jsonl"),
        # Past the benchmark's three step-2 labels, imported labels count as step 3.
        ("abstain", "abstain", 3, 3, "words.jsonl"),
    ]
    assert Label.objects.filter(worker__isnull=False).count() == 0


def test_jsonl_round_trips_through_the_database(tmp_path: Path) -> None:
    records = [record(), coat_record()]
    benchmark_import(path_or_file=write_jsonl(tmp_path / "words.jsonl", records), benchmark_name="bench")
    for item in records:
        for candidate in item["candidates"]:
            candidate.setdefault("sources", [])
    assert stored_records(Benchmark.objects.get()) == records


def test_csv_round_trips_and_stores_what_the_same_jsonl_stores(tmp_path: Path) -> None:
    records = [record(), coat_record()]
    benchmark_import(path_or_file=write_jsonl(tmp_path / "words.jsonl", records), benchmark_name="from-jsonl")
    report = benchmark_import(path_or_file=write_csv(tmp_path / "words.csv", records), benchmark_name="from-csv")
    assert report.format == "csv"
    from_jsonl = stored_records(Benchmark.objects.get(name="from-jsonl"))
    from_csv = stored_records(Benchmark.objects.get(name="from-csv"))
    assert from_csv == from_jsonl
    assert [item["target"] for item in from_csv] == ["calm", "picked"]


def test_importing_the_same_file_twice_changes_nothing(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "words.jsonl", [record(), coat_record(), record(candidates=[{"text": "Still"}])])
    first = benchmark_import(path_or_file=path, benchmark_name="bench")
    before = snapshot()
    again = benchmark_import(path_or_file=path, benchmark_name="bench")

    assert snapshot() == before
    assert not again.changed
    assert not again.benchmark_created
    assert again.contexts.skipped == 2
    assert again.targets.skipped == 2
    assert again.candidates.skipped == first.candidates.created
    assert again.labels.skipped == first.labels.created


def test_the_same_csv_imported_twice_changes_nothing(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "words.csv", [record(), coat_record()])
    benchmark_import(path_or_file=path, benchmark_name="bench")
    before = snapshot()
    assert not benchmark_import(path_or_file=path, benchmark_name="bench").changed
    assert snapshot() == before


def test_duplicate_candidates_merge_their_sources(tmp_path: Path) -> None:
    candidates = [
        {"text": "Still", "sources": ["coinco"], "labels": ["accept"]},
        {"text": "  still ", "sources": ["thesaurus", "coinco"], "labels": ["reject"]},
        {"text": "quiet", "sources": ["thesaurus"]},
    ]
    report = benchmark_import(
        path_or_file=write_jsonl(tmp_path / "words.jsonl", [record(candidates=candidates)]), benchmark_name="bench"
    )
    assert (report.candidates.created, report.candidates.merged) == (2, 1)
    still = Candidate.objects.get(normalized="still")
    assert (still.text, still.sources) == ("Still", ["coinco", "thesaurus"])
    # Both labels are kept, one after the other.
    assert list(still.labels.order_by("position").values_list("value", flat=True)) == ["accept", "reject"]


def test_a_later_file_adds_sources_to_existing_candidates(tmp_path: Path) -> None:
    benchmark_import(path_or_file=write_jsonl(tmp_path / "a.jsonl", [record()]), benchmark_name="bench")
    more = record(candidates=[{"text": "STILL", "sources": ["model"]}, {"text": "tranquil", "sources": ["model"]}])
    report = benchmark_import(path_or_file=write_jsonl(tmp_path / "b.jsonl", [more]), benchmark_name="bench")
    assert (report.candidates.created, report.candidates.merged, report.targets.skipped) == (1, 1, 1)
    assert Candidate.objects.get(normalized="still").sources == ["coinco", "model", "thesaurus"]
    assert Candidate.objects.get(normalized="peaceful").sources == ["coinco"]
    # The second file's labels are its own origin.
    assert set(Label.objects.values_list("origin", flat=True)) == {"a.jsonl"}


def test_contexts_are_stored_once_per_normalised_text(tmp_path: Path) -> None:
    respaced = "The  river was calm after the storm.\nBy evening   the boats drifted HOME."
    lines = [
        record(),
        record(context=respaced, target="boats", offset=respaced.index("boats"), pos="noun", candidates=["ships"]),
    ]
    report = benchmark_import(path_or_file=write_jsonl(tmp_path / "words.jsonl", lines), benchmark_name="bench")

    assert Context.objects.count() == 1
    assert (report.contexts.created, report.contexts.merged) == (1, 1)
    boats = Target.objects.get(word="boats")
    # The target now points into the stored spelling of the context.
    assert boats.context.text == RIVER
    assert boats.offset == RIVER.index("boats")
    assert not benchmark_import(path_or_file=tmp_path / "words.jsonl", benchmark_name="bench").changed


def test_a_target_repeated_in_a_file_merges_and_reimports_cleanly(tmp_path: Path) -> None:
    lines = [
        record(candidates=[{"text": "still", "labels": ["accept", "accept"]}]),
        coat_record(),
        record(candidates=[{"text": "still", "labels": ["reject"]}, {"text": "quiet", "labels": ["accept"]}]),
    ]
    path = write_jsonl(tmp_path / "words.jsonl", lines)
    report = benchmark_import(path_or_file=path, benchmark_name="bench")
    assert (report.targets.created, report.targets.merged) == (2, 1)
    still = Candidate.objects.get(normalized="still")
    assert list(still.labels.order_by("position").values_list("position", "value")) == [
        (0, "accept"),
        (1, "accept"),
        (2, "reject"),
    ]
    before = snapshot()
    assert not benchmark_import(path_or_file=path, benchmark_name="bench").changed
    assert snapshot() == before


def test_a_changed_label_under_the_same_origin_is_refused(tmp_path: Path) -> None:
    benchmark_import(path_or_file=write_jsonl(tmp_path / "words.jsonl", [record()]), benchmark_name="bench")
    before = snapshot()
    changed = record()
    changed["candidates"][0]["labels"][1] = "accept"
    with pytest.raises(ImportFailed, match=r"words.jsonl, line 1, field 'labels': label 2 of candidate 'still'"):
        benchmark_import(path_or_file=write_jsonl(tmp_path / "words.jsonl", [changed]), benchmark_name="bench")
    assert snapshot() == before


def test_appended_labels_are_added_after_the_earlier_ones(tmp_path: Path) -> None:
    benchmark_import(path_or_file=write_jsonl(tmp_path / "words.jsonl", [record()]), benchmark_name="bench")
    longer = record()
    longer["candidates"][2]["labels"] = ["reject", "accept", "accept"]
    report = benchmark_import(path_or_file=write_jsonl(tmp_path / "words.jsonl", [longer]), benchmark_name="bench")
    assert (report.labels.created, report.labels.skipped) == (2, 5)


def test_prolex_numbers_are_labels_and_keep_their_spelling(tmp_path: Path) -> None:
    line = record(candidates=[{"text": "still", "labels": [1, -1, "0"], "cefr": "b1"}], cefr="A2")
    benchmark_import(path_or_file=write_jsonl(tmp_path / "words.jsonl", [line]), benchmark_name="bench")
    still = Candidate.objects.get()
    assert list(still.labels.order_by("position").values_list("value", "raw_value")) == [
        ("accept", "1"),
        ("reject", "-1"),
        ("abstain", "0"),
    ]
    assert (still.cefr, still.target.cefr) == ("B1", "A2")


def test_gzipped_files_and_file_objects_are_read(tmp_path: Path) -> None:
    text = "".join(json.dumps(item) + "\n" for item in [record(), coat_record()])
    path = tmp_path / "words.jsonl.gz"
    path.write_bytes(gzip.compress(text.encode()))
    assert benchmark_import(path_or_file=path, benchmark_name="gz").targets.created == 2
    report = benchmark_import(path_or_file=io.BytesIO(text.encode()), benchmark_name="stream")
    assert (report.format, report.origin, report.targets.created) == ("jsonl", "upload", 2)


def test_a_utf8_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "words.csv", [record()])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert benchmark_import(path_or_file=path, benchmark_name="bench").format == "csv"
    assert Candidate.objects.count() == 3


def test_progress_is_reported_per_chunk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writer, "CHUNK_TARGETS", 1)
    calls: list[tuple[int, int | None]] = []
    path = write_jsonl(tmp_path / "words.jsonl", [record(), coat_record()])
    benchmark_import(
        path_or_file=path, benchmark_name="bench", progress=lambda done, total: calls.append((done, total))
    )
    assert calls == [(1, None), (2, None)]


def test_the_portable_insert_path_stores_the_same_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite (``make run``) inserts through bulk_create instead of COPY; the rows must not differ."""
    path = write_jsonl(tmp_path / "words.jsonl", [record(), coat_record()])
    benchmark_import(path_or_file=path, benchmark_name="fast")
    monkeypatch.setattr(writer, "bulk_copy", lambda: False)
    benchmark_import(path_or_file=path, benchmark_name="portable")
    assert stored_records(Benchmark.objects.get(name="portable")) == stored_records(Benchmark.objects.get(name="fast"))
    assert Candidate.objects.filter(target__benchmark__name="portable", stage="reduce").count() == 6
    assert not benchmark_import(path_or_file=path, benchmark_name="portable").changed


@pytest.mark.production_database("reads PostgreSQL's planner statistics (pg_stats)")
def test_a_large_import_gives_the_planner_statistics_of_the_columns_its_lookups_filter_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    monkeypatch.setattr(service, "ANALYZE_AFTER_ROWS", 1)
    with django_capture_on_commit_callbacks(execute=True):
        benchmark_import(path_or_file=write_jsonl(tmp_path / "words.jsonl", [record()]), benchmark_name="bench")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tablename, attname FROM pg_stats WHERE tablename IN (%s, %s, %s, %s)",
            [model._meta.db_table for model in (Context, Target, Candidate, Label)],
        )
        analysed = set(cursor.fetchall())
    expected = {
        (Context._meta.db_table, "benchmark_id"),
        (Context._meta.db_table, "digest"),
        (Target._meta.db_table, "context_id"),
        (Candidate._meta.db_table, "target_id"),
        (Label._meta.db_table, "candidate_id"),
        (Label._meta.db_table, "origin"),
        (Label._meta.db_table, "assignment_id"),
    }
    assert expected <= analysed


def test_targets_without_candidates_are_kept(tmp_path: Path) -> None:
    lines = [record(candidates=[]), record(context=COAT, target="coat", offset=COAT.index("coat"), pos="noun")]
    report = benchmark_import(path_or_file=write_jsonl(tmp_path / "words.jsonl", lines), benchmark_name="bench")
    assert report.targets.created == 2
    assert row_counts()["candidates"] == 3


def test_the_examples_in_the_format_documentation_import(tmp_path: Path) -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "formats.md").read_text()
    jsonl = docs.split("```json\n", 1)[1].split("```", 1)[0]
    csv_text = docs.split("```csv\n", 1)[1].split("```", 1)[0]
    (tmp_path / "example.jsonl").write_text(jsonl)
    (tmp_path / "example.csv").write_text(csv_text)
    from_jsonl = benchmark_import(path_or_file=tmp_path / "example.jsonl", benchmark_name="docs")
    # The CSV example repeats the first JSONL target, labels and all: the same data under the same origin.
    from_csv = benchmark_import(path_or_file=tmp_path / "example.csv", benchmark_name="docs", origin="example.jsonl")
    assert (from_jsonl.targets.created, from_jsonl.candidates.created, from_jsonl.labels.created) == (2, 5, 6)
    assert (from_csv.targets.skipped, from_csv.candidates.skipped, from_csv.labels.skipped) == (1, 3, 3)
    assert not from_csv.changed


@pytest.mark.production_database("reads PostgreSQL's planner statistics (pg_stats)")
def test_a_large_import_renews_the_candidates_statistics_before_its_commit_checks_their_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside the import's transaction, not after it: the commit checks every key naming a new
    candidate, and a plan made on statistics that count none of them may walk the (benchmark, id)
    index whole for each (docs/design.md §7, "Candidates by benchmark")."""
    path = write_jsonl(tmp_path / "words.jsonl", [record()])
    candidates = connection.ops.quote_name(Candidate._meta.db_table)

    def analysed_within(threshold: int, name: str) -> list[str]:
        monkeypatch.setattr(service, "ANALYZE_AFTER_ROWS", threshold)
        with CaptureQueriesContext(connection) as captured:
            benchmark_import(path_or_file=path, benchmark_name=name)  # no commit: its callbacks do not run
        return [query["sql"] for query in captured.captured_queries if query["sql"].startswith("ANALYZE")]

    assert analysed_within(10**6, "small") == []
    within = analysed_within(1, "large")
    assert len(within) == 1 and within[0].startswith(f"ANALYZE {candidates} (")
