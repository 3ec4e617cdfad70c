"""Every bad-input path: a message naming file, line (or id) and field, and nothing written."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any

import pytest

from annotation.importers import writer
from annotation.models import Benchmark, Candidate, Target
from annotation.services import ImportFailed, benchmark_import
from tests.annotation.import_helpers import FIXTURES, RIVER, coat_record, record, row_counts, write_csv, write_jsonl

pytestmark = pytest.mark.django_db

NOTHING = {"benchmarks": 0, "contexts": 0, "targets": 0, "candidates": 0, "labels": 0}


def _fails(path: Path, fmt: str = "auto", name: str = "bench") -> ImportFailed:
    with pytest.raises(ImportFailed) as caught:
        benchmark_import(path_or_file=path, benchmark_name=name, fmt=fmt)
    return caught.value


JSONL_CASES = [
    pytest.param(
        record(offset=4),
        "line 2, field 'offset'",
        "offset 4 does not point at 'calm' in the context (found 'rive')",
        id="offset",
    ),
    pytest.param(record(pos="pronoun"), "line 2, field 'pos'", "unknown part of speech 'pronoun'", id="pos"),
    pytest.param(
        record(candidates=[{"text": "still"}, {"text": "   "}]),
        "line 2, field 'candidates[1].text'",
        "empty candidate",
        id="empty-candidate",
    ),
    pytest.param(
        record(candidates=[{"text": "still", "labels": ["accept", "maybe"]}]),
        "line 2, field 'candidates[0].labels[1]'",
        "unknown label value 'maybe'",
        id="label",
    ),
    pytest.param(record(pos=None), "line 2, field 'pos'", "missing field", id="missing-pos"),
    pytest.param(record(candidates=None), "line 2, field 'candidates'", "missing field", id="missing-candidates"),
    pytest.param(
        record(candidates=[{"sources": ["coinco"]}]),
        "line 2, field 'candidates[0].text'",
        "missing field",
        id="missing-text",
    ),
    pytest.param(record(offset="12"), "line 2, field 'offset'", "non-negative integer", id="offset-type"),
    pytest.param(record(cefr="D1"), "line 2, field 'cefr'", "unknown CEFR level 'D1'", id="cefr"),
]


@pytest.mark.parametrize(("bad", "where", "message"), JSONL_CASES)
def test_a_bad_jsonl_record_names_line_and_field_and_writes_nothing(
    tmp_path: Path, bad: dict[str, Any], where: str, message: str
) -> None:
    path = write_jsonl(tmp_path / "words.jsonl", [coat_record(), bad])
    error = _fails(path)
    assert str(error).startswith(f"words.jsonl, {where}: ")
    assert message in str(error)
    assert row_counts() == NOTHING


def test_malformed_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "words.jsonl"
    path.write_text(json.dumps(coat_record()) + "\n" + json.dumps(record()) + "\n" + '{"context": "x",\n')
    error = _fails(path)
    assert str(error).startswith("words.jsonl, line 3: malformed JSON")
    assert row_counts() == NOTHING


def test_a_line_that_is_not_an_object_is_malformed(tmp_path: Path) -> None:
    path = tmp_path / "words.jsonl"
    path.write_text(json.dumps(coat_record()) + "\n[1, 2]\n")
    assert "line 2: malformed JSON: expected an object" in str(_fails(path))


def test_text_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "words.jsonl"
    latin1 = json.dumps(record(context="Caf\u00e9 au lait: calm", offset=14), ensure_ascii=False).encode("latin-1")
    path.write_bytes(json.dumps(coat_record()).encode() + b"\n" + latin1 + b"\n")
    error = _fails(path)
    assert str(error).startswith("words.jsonl, line 2: not UTF-8 text: byte 0xe9")
    assert row_counts() == NOTHING


CSV_HEADER = "context,target,offset,pos,lemma,candidate,sources,labels\n"
CSV_GOOD = f'"{RIVER}",calm,14,adj,calm,still,coinco;thesaurus,accept;reject\n'


@pytest.mark.parametrize(
    ("row", "where", "message"),
    [
        pytest.param(
            f'"{RIVER}",calm,15,adj,calm,quiet,,\n', "line 3, field 'offset'", "does not point at", id="offset"
        ),
        pytest.param(f'"{RIVER}",calm,x,adj,calm,quiet,,\n', "line 3, field 'offset'", "non-negative", id="offset-nan"),
        pytest.param(
            f'"{RIVER}",calm,14,det,calm,quiet,,\n', "line 3, field 'pos'", "unknown part of speech", id="pos"
        ),
        pytest.param(f'"{RIVER}",calm,14,adj,calm, ,,\n', "line 3, field 'candidate'", "empty candidate", id="empty"),
        pytest.param(f'"{RIVER}",calm,14,adj,calm,quiet,,yes\n', "line 3, field 'labels'", "unknown label", id="label"),
        pytest.param(f'"{RIVER}",calm,14,adj,calm,quiet\n', "line 3", "malformed CSV: expected 8 fields", id="fields"),
        pytest.param(f'"{RIVER}",calm,14,adj,calm,"quiet,,\n', "line 3", "malformed CSV", id="open-quote"),
    ],
)
def test_a_bad_csv_row_names_line_and_field_and_writes_nothing(
    tmp_path: Path, row: str, where: str, message: str
) -> None:
    path = tmp_path / "words.csv"
    path.write_text(CSV_HEADER + CSV_GOOD + row, encoding="utf-8")
    error = _fails(path, fmt="csv")
    assert str(error).startswith(f"words.csv, {where}")
    assert message in str(error)
    assert row_counts() == NOTHING


def test_a_csv_without_a_required_column_names_it(tmp_path: Path) -> None:
    path = tmp_path / "words.csv"
    path.write_text("context,target,pos,candidate\n" + f'"{RIVER}",calm,adj,still\n', encoding="utf-8")
    assert str(_fails(path)).startswith("words.csv, line 1, field 'offset': missing field")


def test_a_csv_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "words.csv"
    path.write_bytes((CSV_HEADER + CSV_GOOD).encode() + f'"{RIVER}",calm,14,adj,calm,s\u00fcss,,\n'.encode("cp1252"))
    assert str(_fails(path)).startswith("words.csv, line 3: not UTF-8 text")
    assert row_counts() == NOTHING


def _swords(tmp_path: Path, change: Any, name: str = "broken.json") -> Path:
    data = json.loads((FIXTURES / "swords_small.json").read_text())
    change(data)
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=2))
    return path


def _first(data: dict[str, Any], key: str) -> tuple[str, dict[str, Any]]:
    return next(iter(data[key].items()))


def test_a_swords_target_with_an_unknown_part_of_speech_is_named_by_id(tmp_path: Path) -> None:
    path = _swords(tmp_path, lambda data: _first(data, "targets")[1].update(pos="INTJ"))
    tid = _first(json.loads(path.read_text()), "targets")[0]
    error = _fails(path)
    assert str(error).startswith(f"broken.json, {tid}, field 'pos': unknown part of speech 'INTJ'")
    assert row_counts() == NOTHING


def test_a_swords_target_whose_offset_misses_it_is_named_by_id(tmp_path: Path) -> None:
    path = _swords(tmp_path, lambda data: _first(data, "targets")[1].update(offset=0))
    tid = _first(json.loads(path.read_text()), "targets")[0]
    assert str(_fails(path)).startswith(f"broken.json, {tid}, field 'offset': offset 0 does not point at 'calm'")
    assert row_counts() == NOTHING


def test_an_empty_swords_substitute_is_named_by_id(tmp_path: Path) -> None:
    path = _swords(tmp_path, lambda data: _first(data, "substitutes")[1].update(substitute=" "))
    sid = _first(json.loads(path.read_text()), "substitutes")[0]
    assert str(_fails(path)).startswith(f"broken.json, {sid}, field 'substitute': empty candidate")


def test_an_unknown_swords_label_is_named_by_substitute_id(tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        sid = _first(data, "substitute_labels")[0]
        data["substitute_labels"][sid] = ["TRUE", "MAYBE"]

    path = _swords(tmp_path, change)
    sid = _first(json.loads(path.read_text()), "substitutes")[0]
    error = _fails(path)
    assert str(error).startswith(f"broken.json, {sid}, field 'substitute_labels': unknown label value 'MAYBE'")
    assert row_counts() == NOTHING


def test_a_swords_file_missing_a_top_level_field_says_which(tmp_path: Path) -> None:
    path = _swords(tmp_path, lambda data: data.pop("substitutes_lemmatized"))
    assert str(_fails(path)) == "broken.json, field 'substitutes_lemmatized': missing field at the top level"


def test_a_swords_target_of_an_unknown_context_is_refused(tmp_path: Path) -> None:
    path = _swords(tmp_path, lambda data: _first(data, "targets")[1].update(context_id="c:nowhere"))
    assert "field 'context_id': unknown context id 'c:nowhere'" in str(_fails(path))


def test_a_swords_target_without_its_word_is_a_missing_field(tmp_path: Path) -> None:
    path = _swords(tmp_path, lambda data: _first(data, "targets")[1].pop("target"))
    assert "field 'target': missing field" in str(_fails(path))


def test_malformed_swords_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    text = (FIXTURES / "swords_small.json").read_text()
    path.write_text(text.replace('"pos": "ADJ"', '"pos": ADJ', 1))
    error = _fails(path)
    line = text.splitlines().index(next(x for x in text.splitlines() if '"pos": "ADJ"' in x)) + 1
    assert str(error).startswith(f"broken.json, line {line}: malformed JSON")


def test_a_swords_file_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json.gz"
    text = (FIXTURES / "swords_small.json").read_text().replace("\\u201c", "\u201c", 1)
    line = next(number for number, x in enumerate(text.splitlines(), 1) if "\u201c" in x)
    path.write_bytes(gzip.compress(text.encode("cp1252")))
    assert str(_fails(path)).startswith(f"broken.json.gz, line {line}: not UTF-8 text")


def test_a_damaged_gzip_file_fails_cleanly(tmp_path: Path) -> None:
    data = gzip.compress(json.dumps(coat_record()).encode() * 50)
    path = tmp_path / "words.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    assert "words.jsonl.gz" in str(_fails(path))
    assert row_counts() == NOTHING


def test_an_empty_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("  \n")
    assert str(_fails(path)) == "empty.jsonl: the file is empty"


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    assert "cannot open the file" in str(_fails(tmp_path / "nowhere.jsonl"))


def test_an_unknown_format_or_benchmark_name_is_refused(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "words.jsonl", [record()])
    assert "field 'format'" in str(_fails(path, fmt="xml"))
    assert "field 'benchmark'" in str(_fails(path, name="not a slug"))
    assert row_counts() == NOTHING


def test_an_error_after_several_chunks_leaves_an_existing_benchmark_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    benchmark_import(path_or_file=write_jsonl(tmp_path / "first.jsonl", [record()]), benchmark_name="bench")
    before = row_counts()
    monkeypatch.setattr(writer, "CHUNK_TARGETS", 1)
    lines = [coat_record(), record(candidates=[{"text": "quiet", "sources": ["model"]}])]
    lines.append(record(context="A third text that is calm.", offset=21, pos="pronoun"))
    path = write_csv(tmp_path / "second.csv", lines)
    error = _fails(path)
    assert str(error).startswith("second.csv, line 6, field 'pos'")
    assert row_counts() == before
    assert Benchmark.objects.get().scheme_settings == {}


def test_an_overlong_swords_id_or_lemma_is_refused(tmp_path: Path) -> None:
    def long_id(data: dict[str, Any]) -> None:
        cid, _ = _first(data, "contexts")
        data["contexts"] = {("c:" + "0" * 300 if key == cid else key): value for key, value in data["contexts"].items()}

    refused = str(_fails(_swords(tmp_path, long_id)))
    assert "field 'contexts': 302 characters, over IMPORT_MAX_ID_LENGTH (200)" in refused
    path = _swords(tmp_path, lambda data: _first(data, "targets")[1]["extra"].update(coinco_lemma="x" * 201))
    assert "field 'extra.coinco_lemma': 201 characters, over IMPORT_MAX_WORD_LENGTH (200)" in str(_fails(path))
    assert "field 'lemma'" in str(_fails(write_jsonl(tmp_path / "w.jsonl", [record(lemma="y" * 201)])))
    assert row_counts() == NOTHING


class _CountingFile(io.BytesIO):
    """An upload that counts the bytes the import reads from it."""

    def __init__(self, data: bytes, name: str) -> None:
        super().__init__(data)
        self.name = name
        self.bytes_read = 0

    def readinto(self, buffer: Any) -> int:
        count = super().readinto(buffer)
        self.bytes_read += count
        return count


@pytest.mark.parametrize(
    ("first", "member", "says"),
    [
        (b"", b"\x00" * 2**20, "line 1: the line is longer than 1 MiB"),
        (json.dumps(coat_record()).encode() + b"\n", (b" " * 99 + b"\n") * 10_000, "over 200 times as much"),
    ],
    ids=["nul", "blank-lines"],
)
def test_a_gzip_bomb_is_refused_after_reading_a_small_part_of_it(first: bytes, member: bytes, says: str) -> None:
    # About 1 MB of gzip that expands to 1 GiB: one compressed member, repeated.
    bomb = _CountingFile(gzip.compress(first) + gzip.compress(member) * 1024, "bomb.gz")
    with pytest.raises(ImportFailed, match=says):
        benchmark_import(path_or_file=bomb, benchmark_name="bench")
    assert bomb.bytes_read < len(bomb.getvalue()) / 20
    assert row_counts() == NOTHING


def test_later_rows_of_a_csv_target_may_leave_the_lemma_empty(tmp_path: Path) -> None:
    row = f'"{RIVER}",calm,14,adj,{{}},{{}},,\n'
    path = tmp_path / "words.csv"
    path.write_text(CSV_HEADER + row.format("calm", "still") + row.format("", "quiet") + row.format("calm", "hush"))
    benchmark_import(path_or_file=path, benchmark_name="bench")
    assert list(Target.objects.values_list("lemma", flat=True)) == ["calm"]
    assert Candidate.objects.count() == 3
