"""The ProLex CSV release: imported as rows of targets with labelled candidates, exported back with
the same content, columns and row order; a bad row is refused naming its line and column."""

from __future__ import annotations

import ast
import csv
import io
from pathlib import Path

import pytest
from django.core.management import call_command

from analysis.services import benchmark_export
from annotation.models import Benchmark, Label, Target
from annotation.services import ImportFailed, benchmark_import

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "prolex_small.csv"
LIST_CELLS = ("acc_subs", "unacc_subs", "prof_acc_subs", "prof_unacc_subs", "prof_acc_cefr", "prof_unacc_cefr")


def _export(name: str) -> str:
    out = io.StringIO()
    benchmark_export(benchmark=Benchmark.objects.get(name=name), format="prolex", out=out)
    return out.getvalue()


def _table(text: str) -> list[dict[str, object]]:
    """Rows with the list cells parsed, so lists compare by content and type."""
    rows = list(csv.DictReader(io.StringIO(text)))
    return [
        {key: ast.literal_eval(value) if key in LIST_CELLS else value for key, value in row.items()} for row in rows
    ]


def test_the_release_exports_back_with_the_same_content_columns_and_order() -> None:
    report = benchmark_import(path_or_file=FIXTURE, benchmark_name="px", fmt="prolex")
    exported = _export("px")

    original = FIXTURE.read_text()
    assert exported.splitlines()[0] == original.splitlines()[0]
    assert _table(exported) == _table(original)
    # Lists keep their duplicates and order, 'TRUE' stays a string, levels keep -1, 6 and 'None'.
    first, second, _ = _table(exported)
    assert first["acc_subs"] == ["employ", "utilize", "employ"]
    assert first["prof_unacc_subs"] == ["don't"] and first["prof_unacc_cefr"] == ["None"]
    assert second["acc_subs"] == ["TRUE", "good"] and second["t_words_cefr"] == "-1"
    assert second["prof_acc_cefr"] == [6, -1]
    assert (report.targets.created, report.labels.created) == (3, 8)
    assert Benchmark.objects.get(name="px").scheme == "prolex"


def test_a_row_becomes_a_target_at_its_first_marked_occurrence_with_labelled_candidates() -> None:
    benchmark_import(path_or_file=FIXTURE, benchmark_name="px", fmt="prolex")
    target = Target.objects.get(word="use")
    assert target.context.text == "It is useful to use a map, don't you think?"
    assert target.offset == 6
    labels = {
        candidate.text: sorted(Label.objects.filter(candidate=candidate).values_list("raw_value", flat=True))
        for candidate in target.candidates.all()
    }
    # Each entry of acc_subs is a 1, each of unacc_subs a -1; proficiency lists only sort by level.
    assert labels == {"employ": ["1", "1"], "utilize": ["1"], "exploit": ["-1"], "don't": []}
    assert set(Label.objects.values_list("step", flat=True)) == {1}


def test_importing_the_release_again_changes_nothing() -> None:
    benchmark_import(path_or_file=FIXTURE, benchmark_name="px", fmt="prolex")
    again = benchmark_import(path_or_file=FIXTURE, benchmark_name="px", fmt="prolex")
    assert not again.changed
    assert _table(_export("px")) == _table(FIXTURE.read_text())


def test_the_command_exports_the_release_format(tmp_path: Path) -> None:
    call_command("import_benchmark", str(FIXTURE), "--benchmark", "px", "--format", "prolex", stdout=io.StringIO())
    call_command(
        "export_benchmark", "px", "--format", "prolex", "--output", str(tmp_path / "px.csv"), stderr=io.StringIO()
    )
    assert _table((tmp_path / "px.csv").read_text()) == _table(FIXTURE.read_text())


HEADER = "target word,Sentence,acc_subs,unacc_subs,prof_acc_subs,prof_unacc_subs"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            [HEADER, "calm,The sea is **calm**.,\"__import__('os').system('true')\",[],[],[]"],
            r"line 2, field 'acc_subs': not a Python literal",
        ),
        (
            [HEADER, "calm,The sea is **calm**.,\"['still', 3]\",[],[],[]"],
            r"line 2, field 'acc_subs': must be a list of strings",
        ),
        (
            [HEADER, "calm,The sea is calm.,['still'],[],[],[]"],
            r"line 2, field 'Sentence': does not mark the target word",
        ),
        (["target word,Sentence,acc_subs", "calm,x,[]"], r"line 1: missing columns: unacc_subs, prof_acc_subs"),
        ([HEADER + ",notes", "calm,The **calm** sea.,[],[],[],[],x"], r"line 1: unknown columns: notes"),
        (
            [HEADER + ",prof_acc_cefr", "calm,The **calm** sea.,['still'],[],['still'],[],\"[1, 2]\""],
            r"line 2, field 'prof_acc_cefr': has 2 levels for the 1 entries of prof_acc_subs",
        ),
        (
            [HEADER, "calm,The **calm** sea.,[],[],[],[]", "calm,The **calm** sea.,[],[],[],[]"],
            r"line 3, field 'Sentence': repeats the target and sentence of line 2",
        ),
        ([HEADER, "calm,The **calm** sea.,[],[]"], r"line 2: has 4 cells for the 6 columns"),
    ],
)
def test_a_bad_row_is_refused_naming_its_line_and_column_and_nothing_is_written(lines: list[str], message: str) -> None:
    data = io.BytesIO(("\n".join(lines) + "\n").encode())
    data.name = "bad.csv"
    with pytest.raises(ImportFailed, match=message):
        benchmark_import(path_or_file=data, benchmark_name="px", fmt="prolex")
    assert not Benchmark.objects.filter(name="px").exists()


def test_detection_from_the_content_tells_the_release_from_our_csv() -> None:
    """A ProLex file imported without naming its format is read as the release, labels and all; our
    CSV, whose header names other columns, stays our CSV."""
    benchmark_import(path_or_file=FIXTURE, benchmark_name="px-auto")
    assert Benchmark.objects.get(name="px-auto").scheme == "prolex"
    assert _export("px-auto") == FIXTURE.read_text()

    ours = io.BytesIO(b"context,target,offset,pos,candidate\nA big storm.,big,2,adj,large\n")
    ours.name = "ours.csv"
    benchmark_import(path_or_file=ours, benchmark_name="plain")
    assert Target.objects.get(benchmark__name="plain").candidates.get().text == "large"
