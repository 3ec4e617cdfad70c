"""Imported text may not hide characters that change how it reads: bidirectional overrides and
isolates, and zero-width characters no script needs, are refused with file, line and field named;
right-to-left scripts and the joiners they need are kept (docs/formats.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import Candidate, Context, Target
from annotation.services import ImportFailed, benchmark_import
from tests.annotation.import_helpers import RIVER, coat_record, record, row_counts, write_jsonl

pytestmark = pytest.mark.django_db

NOTHING = {"benchmarks": 0, "contexts": 0, "targets": 0, "candidates": 0, "labels": 0}
RLO = "\u202e"


def _fails(path: Path, fmt: str = "auto") -> str:
    with pytest.raises(ImportFailed) as caught:
        benchmark_import(path_or_file=path, benchmark_name="bench", fmt=fmt)
    return str(caught.value)


@pytest.mark.parametrize(
    ("bad", "where", "what"),
    [
        pytest.param(
            record(candidates=[{"text": "still"}, {"text": f"qui{RLO}et"}]),
            "line 2, field 'candidates[1].text'",
            "U+202E RIGHT-TO-LEFT OVERRIDE at character 4, a bidirectional control",
            id="override-in-candidate",
        ),
        pytest.param(
            record(context="\u2067" + RIVER + "\u2069", offset=RIVER.index("calm") + 1),
            "line 2, field 'context'",
            "U+2067 RIGHT-TO-LEFT ISOLATE at character 1",
            id="isolate-in-context",
        ),
        pytest.param(
            record(context=RIVER.replace("calm", "ca\u200blm"), target="ca\u200blm"),
            "line 2, field 'context'",
            "U+200B ZERO WIDTH SPACE at character 17, an invisible character",
            id="zero-width-space",
        ),
        pytest.param(
            record(candidates=[{"text": "still\u2060"}]),
            "line 2, field 'candidates[0].text'",
            "U+2060 WORD JOINER",
            id="word-joiner",
        ),
        pytest.param(
            record(candidates=[{"text": "\ufeffstill"}]),
            "line 2, field 'candidates[0].text'",
            "U+FEFF ZERO WIDTH NO-BREAK SPACE",
            id="bom-inside-text",
        ),
        pytest.param(record(lemma="ca\u202dlm"), "line 2, field 'lemma'", "U+202D LEFT-TO-RIGHT OVERRIDE", id="lemma"),
    ],
)
def test_a_hidden_control_is_refused_with_file_line_and_field(
    tmp_path: Path, bad: dict[str, object], where: str, what: str
) -> None:
    error = _fails(write_jsonl(tmp_path / "words.jsonl", [coat_record(), bad]))

    assert error.startswith(f"words.jsonl, {where}: contains {what}")
    assert row_counts() == NOTHING


def test_a_hidden_control_in_a_csv_target_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "words.csv"
    header = "context,target,offset,pos,lemma,candidate,sources,labels\n"
    context = RIVER.replace("calm", "c\u202ealm")
    path.write_text(header + f'"{RIVER}",calm,14,adj,calm,still,,\n"{context}",c\u202ealm,14,adj,calm,quiet,,\n')

    error = _fails(path, fmt="csv")

    assert error.startswith("words.csv, line 3, field 'context': contains U+202E RIGHT-TO-LEFT OVERRIDE")
    assert row_counts() == NOTHING


def test_right_to_left_scripts_their_joiners_and_marks_are_kept(tmp_path: Path) -> None:
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # "I want", with the joiner it needs
    arabic = "\u0643\u062a\u0627\u0628 \u062c\u062f\u064a\u062f"
    hebrew = "\u05e1\u05e4\u05e8 \u05d7\u05d3\u05e9"
    context = f"{persian} {arabic} \u200f{hebrew} and the emoji \U0001f469\u200d\U0001f52c."
    word = arabic.split()[0]
    line = record(
        context=context,
        target=word,
        offset=context.index(word),
        lemma="",
        pos="noun",
        candidates=[{"text": persian}, {"text": hebrew}],
    )

    benchmark_import(path_or_file=write_jsonl(tmp_path / "words.jsonl", [line]), benchmark_name="bench")

    assert Context.objects.get().text == context
    assert Target.objects.get().word == word
    assert sorted(Candidate.objects.values_list("text", flat=True)) == sorted([persian, hebrew])
