"""Building a qualification test: gold items from a hand-written file (errors say file, line and
field) or from a finished benchmark's clear scores, the command, and the rules of a build."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.importers.errors import ImportFailed
from annotation.models import Benchmark, Candidate, CandidateStage, Context, Label, Target
from hits.qualification import (
    ClearScores,
    QualificationRefused,
    gold_items_from_benchmark,
    gold_items_read,
    qualification_build,
)
from hits.qualification.models import QualificationTest
from schemes import get_scheme
from schemes.base import QualificationGold, scheme_qualification
from tests.base import Cast
from tests.hits.factories import make_benchmark
from tests.hits.qualification_data import gold_items, take, with_test

pytestmark = pytest.mark.django_db


def scheme_gold(name: str) -> QualificationGold:
    gold = scheme_qualification(get_scheme(name))
    assert gold is not None, f"{name} offers a qualification test"
    return gold


SWORDS_GOLD = scheme_gold("swords")

JSONL = (
    b'{"context": "The bright student solved it.", "target": "bright", "candidate": "clever", "expected": "accept"}\n'
    b"\n"
    b'{"context": "The bright student solved it.", "target": "bright", "offset": 4, "candidate": "table", '
    b'"expected": "Reject"}\n'
)


def finished(name: str, scores: dict[str, str]) -> Benchmark:
    """A benchmark whose candidates of one target carry the given labels ("AAR..." as accept/reject/abstain)."""
    benchmark = Benchmark.objects.create(name=name)
    context = Context.objects.create(benchmark=benchmark, text="She gave a bright answer.")
    target = Target.objects.create(benchmark=benchmark, context=context, word="bright", offset=11, pos="adj")
    value = {"A": "accept", "R": "reject", "U": "abstain"}
    for text, labels in scores.items():
        candidate = Candidate.objects.create(target=target, text=text)
        Label.objects.bulk_create(
            Label(candidate=candidate, value=value[letter], origin="fixture", position=position)
            for position, letter in enumerate(labels)
        )
    return benchmark


def test_a_jsonl_file_gives_gold_items_and_finds_the_offset_when_none_is_given() -> None:
    items = gold_items_read(JSONL, file="gold.jsonl", gold=SWORDS_GOLD)

    assert [(item.offset, item.candidate, item.expected) for item in items] == [
        (4, "clever", "accept"),
        (4, "table", "reject"),
    ]


def test_a_csv_file_gives_gold_items() -> None:
    data = b'context,target,offset,candidate,expected\n"Run, quickly, home.",quickly,,fast,accept\n'

    [item] = gold_items_read(data, file="gold.csv", gold=SWORDS_GOLD)

    assert (item.context, item.offset, item.candidate) == ("Run, quickly, home.", 5, "fast")


@pytest.mark.parametrize(
    ("data", "file", "message"),
    [
        (b'{"context": "A b c", "target": "b", "candidate": "x", "expected": "yes"}\n', "g.jsonl",
         "g.jsonl, line 1, field 'expected': expected must be accept or reject, not 'yes'"),
        (b'\n{"context": "A b c", "target": "z", "candidate": "x", "expected": "accept"}\n', "g.jsonl",
         "g.jsonl, line 2, field 'target': 'z' does not occur in the context"),
        (b'{"context": "A b c", "target": "b", "offset": 0, "candidate": "x", "expected": "accept"}\n', "g.jsonl",
         "g.jsonl, line 1, field 'offset': offset 0 does not point at 'b' in the context"),
        (b'{"context": "A b c", "target": "b", "candidate": "", "expected": "accept"}\n', "g.jsonl",
         "g.jsonl, line 1, field 'candidate': missing or not a text"),
        (b'{"context": "A b c", "target": "b", "candidate": "x", "expected": "accept", "score": 1}\n', "g.jsonl",
         "g.jsonl, line 1, field 'score': unknown field; the fields are context, target, offset, candidate, expected"),
        (b"{not json\n", "g.jsonl",
         "g.jsonl, line 1: not valid JSON (Expecting property name enclosed in double quotes)"),
        (b"context,target,candidate\nA b,b,x\n", "g.csv", "g.csv, line 1, field 'expected': the header lacks expected"),
        (b"context,target,offset,candidate,expected\nA b,b,-1,x,accept\n", "g.csv",
         "g.csv, line 2, field 'offset': not a whole number >= 0: '-1'"),
        (b"", "g.jsonl", "g.jsonl: no gold items in the file"),
        (b"\xff\xfe", "g.jsonl", "g.jsonl: not UTF-8 (byte 0)"),
    ],
)  # fmt: skip
def test_bad_gold_files_are_refused_saying_where_and_why(data: bytes, file: str, message: str) -> None:
    with pytest.raises(ImportFailed) as error:
        gold_items_read(data, file=file, gold=SWORDS_GOLD)

    assert error.value.describe() == message


def test_clear_scores_of_a_finished_benchmark_become_gold_and_unclear_ones_do_not() -> None:
    other = finished(
        "finished",
        {
            "brilliant": "AAAAAAAAAR",  # 0.9, 10 labels: accept
            "clever": "AAAAAAAARR",  # 0.8: not clear
            "table": "RRRRRRRRRU",  # 0.0: reject
            "sunny": "RRRRRRRRR",  # 0.0 but only 9 labels
            "bright": "AAAAAAAAAA",  # the target itself: never gold
        },
    )
    Candidate.objects.create(target=Target.objects.get(benchmark=other), text="vivid")

    items = gold_items_from_benchmark(benchmark=other)
    looser = gold_items_from_benchmark(benchmark=other, clear=ClearScores(min_labels=9, accept_min=0.8))

    assert sorted((item.candidate, item.expected, item.source_score) for item in items) == [
        ("brilliant", "accept", 0.9),
        ("table", "reject", 0.0),
    ]
    assert items[0].context == "She gave a bright answer." and items[0].offset == 11
    assert sorted(item.candidate for item in looser) == ["brilliant", "clever", "sunny", "table"]


def test_a_candidate_a_researcher_excluded_is_never_gold() -> None:
    other = finished("finished", {"brilliant": "AAAAAAAAAA", "table": "RRRRRRRRRR"})
    Candidate.objects.filter(text="table").update(stage=CandidateStage.EXCLUDED)

    assert [item.candidate for item in gold_items_from_benchmark(benchmark=other)] == ["brilliant"]


def test_a_limit_keeps_half_each_way_with_the_seed() -> None:
    other = finished("finished", {f"a{i}": "A" * 10 for i in range(6)} | {f"r{i}": "R" * 10 for i in range(2)})

    first = gold_items_from_benchmark(benchmark=other, limit=4, seed=3)
    again = gold_items_from_benchmark(benchmark=other, limit=4, seed=3)

    assert [item.expected for item in first].count("reject") == 2
    assert first == again


def test_clear_score_thresholds_are_checked() -> None:
    with pytest.raises(ValueError, match="reject_max < accept_min"):
        ClearScores(accept_min=0.3, reject_max=0.5)


def test_a_build_checks_length_pass_mark_and_scheme() -> None:
    benchmark = make_benchmark()
    with pytest.raises(QualificationRefused, match="between 1 and the 8 gold items, not 9"):
        qualification_build(benchmark=benchmark, items=gold_items(), length=9, pass_mark=0.8)
    with pytest.raises(QualificationRefused, match="above 0 and at most 1, not 80"):
        qualification_build(benchmark=benchmark, items=gold_items(), length=4, pass_mark=80)
    with pytest.raises(
        QualificationRefused, match=r"takes no qualification test: its scheme, Smart Word .* offers none"
    ):
        qualification_build(benchmark=make_benchmark(scheme="sws"), items=gold_items(), length=4, pass_mark=0.8)
    assert not QualificationTest.objects.exists()


def test_a_test_of_one_answer_is_refused_because_always_giving_it_would_pass() -> None:
    benchmark = make_benchmark()
    accepts = [item for item in gold_items() if item.expected == "accept"]
    assert accepts and len(accepts) < len(gold_items())

    with pytest.raises(QualificationRefused, match="none expects reject"):
        qualification_build(benchmark=benchmark, items=accepts, length=len(accepts), pass_mark=0.8)
    assert not QualificationTest.objects.exists()


def test_a_finished_swords_benchmark_gives_rejects_only_below_the_default_label_count() -> None:
    # SWORDS drops a candidate after 3 labels without an accept, so a clear reject rarely has 10.
    finished("dropped", {"clever": "AAAAAAAAAA", "table": "RRR"})
    make_benchmark(name="gated")

    with pytest.raises(CommandError, match="lower --min-labels"):
        call_command("qualification_build", "gated", "--from-benchmark", "dropped", "--length", "1", "--pass-mark", "1")
    call_command(
        "qualification_build",
        "gated",
        "--from-benchmark",
        "dropped",
        "--length",
        "2",
        "--pass-mark",
        "1",
        "--min-labels",
        "3",
    )

    assert sorted(QualificationTest.objects.get().items.values_list("expected", flat=True)) == ["accept", "reject"]


def test_a_test_can_be_rebuilt_until_someone_takes_it(cast: Cast) -> None:
    benchmark = make_benchmark()
    with_test(benchmark, length=6)
    rebuilt = qualification_build(benchmark=benchmark, items=gold_items(2, 2), length=3, pass_mark=0.6)
    assert (rebuilt.length, rebuilt.items.count()) == (3, 4)

    take(rebuilt, cast.alice.worker)
    with pytest.raises(QualificationRefused, match="1 person has taken the qualification test"):
        qualification_build(benchmark=benchmark, items=gold_items(), length=4, pass_mark=0.5)
    assert QualificationTest.objects.get().length == 3


def test_a_prolex_benchmark_takes_a_test_in_its_own_choices(cast: Cast) -> None:
    test = with_test(make_benchmark(scheme="prolex"), length=4, pass_mark=1.0)
    from hits.qualification import qualification_attempt_start, qualification_attempt_submit
    from hits.qualification.models import QualificationItem

    attempt = qualification_attempt_start(test=test, worker=cast.alice.worker)
    expected = dict(QualificationItem.objects.filter(pk__in=attempt.items).values_list("pk", "expected"))
    answers = {pk: "1" if expected[pk] == "accept" else "0" for pk in attempt.items}

    graded = qualification_attempt_submit(attempt=attempt, answers=answers)

    assert (graded.correct, graded.total, graded.passed) == (4, 4, True)


def test_the_command_builds_from_a_finished_benchmark(capsys: pytest.CaptureFixture[str]) -> None:
    finished("finished", {"brilliant": "A" * 10, "smart": "A" * 10, "table": "R" * 10, "lamp": "R" * 10})
    make_benchmark(name="next")

    call_command("qualification_build", "next", "--from-benchmark", "finished", "--length", "2", "--pass-mark", "1")

    out = capsys.readouterr().out
    assert "Qualification test of next: 4 gold items (2 expect accept, 2 expect reject) from benchmark finished" in out
    assert QualificationTest.objects.get(benchmark__name="next").length == 2


def test_the_command_builds_from_a_file_and_names_the_bad_line(tmp_path: Path) -> None:
    make_benchmark(name="next")
    good, bad = tmp_path / "gold.jsonl", tmp_path / "bad.jsonl"
    good.write_bytes(JSONL)
    bad.write_bytes(JSONL + b'{"context": "x", "target": "x", "candidate": "y", "expected": "maybe"}\n')

    call_command("qualification_build", "next", "--gold", str(good), "--length", "2", "--pass-mark", "0.5")
    with pytest.raises(CommandError, match=r"bad\.jsonl, line 4, field 'expected'"):
        call_command("qualification_build", "next", "--gold", str(bad), "--length", "2", "--pass-mark", "0.5")
    with pytest.raises(CommandError, match="finished has no candidate with at least 10 valid labels"):
        finished("finished", {"clever": "AR"})
        call_command("qualification_build", "next", "--from-benchmark", "finished", "--length", "1", "--pass-mark", "1")
