"""The Smart Word Suggestions JSON release: imported as sentences, exported back identical; a bad
sentence is refused naming its id and field, with nothing written."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from analysis.services import benchmark_export
from annotation.models import Benchmark, Context, Target
from annotation.services import ImportFailed, benchmark_import

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "sws_small.json"


def _export(name: str) -> str:
    out = io.StringIO()
    benchmark_export(benchmark=Benchmark.objects.get(name=name), format="sws", out=out)
    return out.getvalue()


def test_the_release_exports_back_byte_for_byte_in_id_order() -> None:
    report = benchmark_import(path_or_file=FIXTURE, benchmark_name="sws", fmt="sws")
    exported = _export("sws")

    original = json.loads(FIXTURE.read_text())
    assert exported == json.dumps(original, indent=4) == FIXTURE.read_text()
    assert list(json.loads(exported)) == ["s-2", "a-1", "b-3"]
    # The suggestions keep their order, the no-break space and the PTB quotes stay as written.
    assert list(json.loads(exported)["s-2"]["substitutes"][1][1]) == ["major idea", "big concept"]
    assert "\u00a0" in json.loads(exported)["a-1"]["sentence"]
    assert (report.contexts.created, report.targets.created, Benchmark.objects.get(name="sws").scheme) == (
        3,
        3,
        "sws",
    )


def test_each_sentence_is_a_context_with_a_target_that_is_the_whole_sentence() -> None:
    benchmark_import(path_or_file=FIXTURE, benchmark_name="sws", fmt="sws")
    context = Context.objects.get(external_id="a-1")
    target = Target.objects.get(context=context)
    assert (target.word, target.offset) == (context.text, 0)
    assert context.extra["sws"]["tokens"][4:6] == ["do", "n't"]


def test_importing_the_release_again_changes_nothing() -> None:
    benchmark_import(path_or_file=FIXTURE, benchmark_name="sws", fmt="sws")
    assert not benchmark_import(path_or_file=FIXTURE, benchmark_name="sws", fmt="sws").changed
    assert _export("sws") == FIXTURE.read_text()


def _file(data: object) -> io.BytesIO:
    file = io.BytesIO(json.dumps(data).encode() if not isinstance(data, bytes) else data)
    file.name = "bad.json"
    return file


SENTENCE = {"sentence": "He left.", "sentence_split": ["He", "left", "."], "substitutes": []}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"x": {**SENTENCE, "sentence_split": ["He", "walked", "."]}}, r"x, field 'sentence_split\[1\]': token 1"),
        ({"x": {**SENTENCE, "substitutes": [[[1, 4], {"went": 1}, 1]]}}, r"x, field 'substitutes\[0\]': span \[1, 4\]"),
        (
            {"x": {**SENTENCE, "substitutes": [[[1, 2], {"went": 1}, 3]]}},
            r"x, field 'substitutes\[0\]': type must be 1",
        ),
        ({"x": {**SENTENCE, "substitutes": [[[1, 2], {"went": 0}, 1]]}}, r"x, field 'substitutes\[0\]\[1\]': must map"),
        ({"x": {**SENTENCE, "sentence": ""}}, r"x, field 'sentence': must be a non-empty string"),
        (
            {"x": SENTENCE, "y": {**SENTENCE, "sentence": "He  left."}},
            r"y, field 'sentence': repeats the sentence of 'x'",
        ),
        (b'{"x": {"sentence": "a", "sentence": "b"}}', r"x, field 'sentence': appears twice"),
        ([SENTENCE], r"line 1: the top level must be an object"),
    ],
)
def test_a_bad_sentence_is_refused_naming_its_id_and_field(data: object, message: str) -> None:
    with pytest.raises(ImportFailed, match=message):
        benchmark_import(path_or_file=_file(data), benchmark_name="sws", fmt="sws")
    assert not Benchmark.objects.filter(name="sws").exists()


def test_detection_from_the_content_tells_the_release_from_our_jsonl() -> None:
    """A file imported without naming its format: the release (indented or on one line) is read as
    the release, and a JSONL line whose first value is text stays JSONL."""
    benchmark_import(path_or_file=FIXTURE, benchmark_name="sws-auto")
    assert sorted(Context.objects.values_list("external_id", flat=True)) == ["a-1", "b-3", "s-2"]
    one_line = _file({"new-1": {"sentence": "It works well.", "substitutes": []}})
    report = benchmark_import(path_or_file=one_line, benchmark_name="sws-auto")
    assert report.targets.created == 1
    assert Target.objects.get(context__external_id="new-1").word == "It works well."

    jsonl = _file({"context": "It works well.", "target": "works", "offset": 3, "pos": "verb", "candidates": []})
    benchmark_import(path_or_file=jsonl, benchmark_name="plain")
    assert Benchmark.objects.get(name="plain").scheme != "sws"
    assert Target.objects.get(benchmark__name="plain").word == "works"
