"""Limits on imported text are settings with generous defaults: a long sentence of a real release
imports whole, and text over a (lowered) limit is refused naming the file, the line or item, the
field and the setting, with nothing written."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.test import override_settings

from analysis.services import benchmark_export
from annotation.models import Benchmark, Candidate, Context, Target
from annotation.services import ImportFailed, benchmark_import
from hits.models import HITItem
from schemes.sws.tokens import tokenize

pytestmark = pytest.mark.django_db

PROLEX_HEADER = ["target word", "Sentence", "acc_subs", "unacc_subs", "prof_acc_subs", "prof_unacc_subs"]


def _sentence(length: int) -> str:
    """An English-looking sentence of exactly ``length`` characters, ending with a full stop."""
    words = ("the", "harbour", "lights", "were", "dimmed", "while", "ships", "waited", "outside")
    text = ""
    index = 0
    while len(text) < length - 1:
        text += ("" if not text else " ") + words[index % len(words)]
        index += 1
    return text[: length - 1].rstrip().ljust(length - 1, "s") + "."


def _sws(sentences: dict[str, str], name: str = "sws.json") -> io.BytesIO:
    data = {
        key: {"sentence": text, "sentence_split": [token.text for token in tokenize(text)], "substitutes": []}
        for key, text in sentences.items()
    }
    file = io.BytesIO(json.dumps(data, indent=4).encode())
    file.name = name
    return file


def _prolex(rows: list[list[str]], name: str = "prolex.csv") -> io.BytesIO:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(PROLEX_HEADER)
    writer.writerows(rows)
    file = io.BytesIO(buffer.getvalue().encode())
    file.name = name
    return file


def test_an_sws_sentence_of_641_characters_imports_and_exports_back_exactly() -> None:
    long = _sentence(641)
    assert len(long) == 641
    file = _sws({"long-1": long, "short-2": "He left early."})
    benchmark_import(path_or_file=file, benchmark_name="sws", fmt="sws")

    target = Target.objects.get(context__external_id="long-1")
    assert (target.word, target.context.text) == (long, long)
    out = io.StringIO()
    benchmark_export(benchmark=Benchmark.objects.get(name="sws"), format="sws", out=out)
    assert out.getvalue() == file.getvalue().decode()


def test_a_sentence_at_the_default_limit_is_stored_whole_as_a_target_and_a_hit_item() -> None:
    # 20,000 characters: past what an index entry holds, so the target's uniqueness rests on its MD5.
    long = _sentence(20_000)
    benchmark_import(path_or_file=_sws({"very-long": long}), benchmark_name="sws", fmt="sws")
    target = Target.objects.get()
    assert len(target.word) == 20_000
    item = HITItem(text=target.word, kind="sentence", position=0)
    item.full_clean(exclude=["hit"])


def test_a_prolex_row_with_a_long_sentence_imports() -> None:
    sentence = _sentence(5_000)[:-1] + " and the **calm** sea."
    benchmark_import(
        path_or_file=_prolex([["calm", sentence, "['still']", "[]", "[]", "[]"]]), benchmark_name="px", fmt="prolex"
    )
    target = Target.objects.get()
    assert target.context.text == sentence.replace("**", "")
    assert Candidate.objects.get().text == "still"


def _refused(file: io.BytesIO, fmt: str) -> str:
    with pytest.raises(ImportFailed) as error:
        benchmark_import(path_or_file=file, benchmark_name="limits", fmt=fmt)
    assert not Benchmark.objects.filter(name="limits").exists()
    assert not Context.objects.exists()
    return str(error.value)


@override_settings(IMPORT_MAX_TEXT_LENGTH=500)
def test_an_sws_sentence_over_the_setting_is_refused_naming_item_field_and_setting() -> None:
    message = _refused(_sws({"ok": "He left early.", "too-long": _sentence(641)}, "release.json"), "sws")
    assert message == "release.json, too-long, field 'sentence': 641 characters, over IMPORT_MAX_TEXT_LENGTH (500)"


@override_settings(IMPORT_MAX_TEXT_LENGTH=1_000)
def test_a_prolex_sentence_over_the_setting_is_refused_naming_line_field_and_setting() -> None:
    long = _sentence(1_200)[:-1] + " a **calm** sea."
    rows = [["calm", "The **calm** sea.", "[]", "[]", "[]", "[]"], ["calm", long, "[]", "[]", "[]", "[]"]]
    message = _refused(_prolex(rows, "px.csv"), "prolex")
    assert message == f"px.csv, line 3, field 'Sentence': {len(long):,} characters, over IMPORT_MAX_TEXT_LENGTH (1,000)"


@override_settings(IMPORT_MAX_TEXT_LENGTH=20_000)
def test_a_context_over_the_default_is_refused_in_jsonl_and_csv() -> None:
    context = "x " * 10_000 + "calm sea"
    record = {"context": context, "target": "calm", "offset": 20_000, "pos": "adj", "candidates": ["still"]}
    jsonl = io.BytesIO((json.dumps(record) + "\n").encode())
    jsonl.name = "long.jsonl"
    assert _refused(jsonl, "jsonl") == (
        "long.jsonl, line 1, field 'context': 20,008 characters, over IMPORT_MAX_TEXT_LENGTH (20,000)"
    )
    table = io.StringIO()
    writer = csv.writer(table, lineterminator="\n")
    writer.writerows([["context", "target", "offset", "pos", "candidate"], [context, "calm", 20_000, "adj", "still"]])
    rows = io.BytesIO(table.getvalue().encode())
    rows.name = "long.csv"
    assert _refused(rows, "csv") == (
        "long.csv, line 2, field 'context': 20,008 characters, over IMPORT_MAX_TEXT_LENGTH (20,000)"
    )


@override_settings(IMPORT_MAX_WORD_LENGTH=10, IMPORT_MAX_CANDIDATE_LENGTH=12, IMPORT_MAX_ID_LENGTH=8)
def test_the_word_candidate_and_id_limits_are_settings_too() -> None:
    def jsonl(**changes: object) -> io.BytesIO:
        record = {"context": "A serendipitous find.", "target": "find", "offset": 16, "pos": "noun"}
        record |= {"candidates": ["discovery"], **changes}
        file = io.BytesIO((json.dumps(record) + "\n").encode())
        file.name = "w.jsonl"
        return file

    long_word = jsonl(target="serendipitous", offset=2)
    assert _refused(long_word, "jsonl") == (
        "w.jsonl, line 1, field 'target': 13 characters, over IMPORT_MAX_WORD_LENGTH (10)"
    )
    long_candidate = jsonl(candidates=["a lucky discovery"])
    assert _refused(long_candidate, "jsonl") == (
        "w.jsonl, line 1, field 'candidates[0].text': 17 characters, over IMPORT_MAX_CANDIDATE_LENGTH (12)"
    )
    assert _refused(_sws({"sentence-1": "He left."}, "ids.json"), "sws") == (
        "ids.json, sentence-1, field 'id': 10 characters, over IMPORT_MAX_ID_LENGTH (8)"
    )


@override_settings(IMPORT_MAX_LINE_BYTES=100)
def test_a_line_over_the_line_setting_is_refused_naming_it() -> None:
    record = {"context": "A calm sea. " * 10, "target": "calm", "offset": 2, "pos": "adj", "candidates": ["still"]}
    file = io.BytesIO((json.dumps(record) + "\n").encode())
    file.name = "lines.jsonl"
    assert (
        _refused(file, "jsonl") == "lines.jsonl, line 1: the line is longer than 100 bytes (IMPORT_MAX_LINE_BYTES=100)"
    )
