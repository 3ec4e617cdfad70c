"""The qualification test asks the benchmark's scheme: which schemes offer one, what a gold item may
expect in the scheme's words (ProLex: 1 / -1), how answers meet it, and a scheme that offers none
(SWS) refused cleanly by the pages, the API and the command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from annotation.importers.errors import ImportFailed
from annotation.models import Benchmark, Candidate, Context, Label, Target, Worker
from hits.models import QualificationAttempt, QualificationItem, QualificationTest
from hits.qualification import (
    GoldItem,
    QualificationRefused,
    gold_items_read,
    qualification_attempt_start,
    qualification_attempt_submit,
    qualification_build,
)
from hits.services import assignment_claim_next, hits_generate
from schemes import get_scheme, registered
from schemes.base import AnswersInvalid, QualificationGold, scheme_qualification
from tests.base import Cast, logged_in
from tests.hits.factories import make_benchmark, make_target
from tests.hits.qualification_data import take

pytestmark = pytest.mark.django_db


def scheme_gold(name: str) -> QualificationGold:
    gold = scheme_qualification(get_scheme(name))
    assert gold is not None, f"{name} offers a qualification test"
    return gold


def api(user: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


PROLEX_JSONL = (
    b'{"context": "The bright student solved it.", "target": "bright", "candidate": "clever", "expected": "1"}\n'
    b'{"context": "The bright student solved it.", "target": "bright", "candidate": "table", "expected": "-1"}\n'
    b'{"context": "She ran quickly home.", "target": "quickly", "candidate": "fast", "expected": 1}\n'
    b'{"context": "She ran quickly home.", "target": "quickly", "candidate": "green", "expected": -1}\n'
    b'{"context": "She ran quickly home.", "target": "quickly", "candidate": "rapidly", "expected": "Accept"}\n'
    b'{"context": "She ran quickly home.", "target": "quickly", "candidate": "purple", "expected": " reject"}\n'
)


# --- what each scheme declares ----------------------------------------------------------------


def test_the_choice_schemes_that_judge_candidates_offer_a_test_and_sws_and_generation_do_not() -> None:
    offered = {scheme.name for scheme in registered() if scheme_qualification(scheme) is not None}

    assert offered == {"swords", "prolex"}


@pytest.mark.parametrize("name", ["swords", "prolex"])
def test_every_answer_on_the_schemes_page_stands_for_a_label_and_each_expectation_is_met_by_one(name: str) -> None:
    scheme, gold = get_scheme(name), scheme_gold(name)
    choices = [choice.value for choice in scheme.page.choices]

    assert set(gold.answers) == set(choices)
    for label in gold.labels:
        assert any(gold.meets(expected=label, answer=choice) for choice in choices)
        assert not all(gold.meets(expected=label, answer=choice) for choice in choices)


def test_prolex_speaks_of_1_and_minus_1_and_swords_of_accept_and_reject() -> None:
    prolex, swords = scheme_gold("prolex"), scheme_gold("swords")

    assert list(prolex.expects) == ["1", "-1"] and prolex.labels == ("accept", "reject")
    assert [prolex.expects_label(word) for word in ("1", " -1 ", "ACCEPT", "reject", "0", "abstain", "yes")] == [
        "accept",
        "reject",
        "accept",
        "reject",
        None,
        None,
        None,
    ]
    assert (prolex.word("accept"), prolex.word("reject")) == ("1", "-1")
    assert prolex.describe() == "1 or -1 (or accept, reject)"
    assert swords.describe() == "accept or reject"
    assert swords.expects_label("-1") is None


def test_an_expected_minus_1_is_met_by_minus_1_or_0_and_an_expected_1_by_1_alone() -> None:
    gold = scheme_gold("prolex")

    assert [gold.meets(expected="reject", answer=answer) for answer in ("1", "-1", "0")] == [False, True, True]
    assert [gold.meets(expected="accept", answer=answer) for answer in ("1", "-1", "0")] == [True, False, False]
    assert not gold.meets(expected="accept", answer="accept")  # not an answer of the ProLex page


def test_a_declaration_a_test_could_not_grade_is_refused() -> None:
    with pytest.raises(ValueError, match="at least two answers"):
        QualificationGold(expects={"yes": "accept"}, answers={"yes": "accept", "no": "reject"})
    with pytest.raises(ValueError, match="no answer meets an expected 'reject'"):
        QualificationGold(expects={"yes": "accept", "no": "reject"}, answers={"yes": "accept"})
    with pytest.raises(ValueError, match="'reject' names a label and expects another"):
        QualificationGold(expects={"reject": "accept", "no": "reject"}, answers={"y": "accept", "n": "reject"})


# --- ProLex gold items, in its words ----------------------------------------------------------


def test_a_prolex_gold_file_takes_1_and_minus_1_as_text_or_number_and_the_labels() -> None:
    items = gold_items_read(PROLEX_JSONL, file="gold.jsonl", gold=scheme_gold("prolex"))
    csv = (
        b"context,target,offset,candidate,expected\n"
        b"The bright one.,bright,,clever,1\n"
        b"The bright one.,bright,4,lamp,-1\n"
    )

    assert [(item.candidate, item.expected) for item in items] == [
        ("clever", "accept"),
        ("table", "reject"),
        ("fast", "accept"),
        ("green", "reject"),
        ("rapidly", "accept"),
        ("purple", "reject"),
    ]
    read = gold_items_read(csv, file="gold.csv", gold=scheme_gold("prolex"))
    assert [item.expected for item in read] == ["accept", "reject"]


@pytest.mark.parametrize(
    ("expected", "file", "message"),
    [
        (b'"0"', "g.jsonl", "g.jsonl, line 2, field 'expected': expected must be 1 or -1 (or accept, reject), not '0'"),
        (b"2", "g.jsonl", "g.jsonl, line 2, field 'expected': expected must be 1 or -1 (or accept, reject), not 2"),
        (b"true", "g.jsonl", "g.jsonl, line 2, field 'expected': missing or not a text"),
        (b'"abstain"', "g.jsonl",
         "g.jsonl, line 2, field 'expected': expected must be 1 or -1 (or accept, reject), not 'abstain'"),
    ],
)  # fmt: skip
def test_a_prolex_gold_file_with_another_expectation_names_line_and_field(
    expected: bytes, file: str, message: str
) -> None:
    data = PROLEX_JSONL.splitlines(keepends=True)[0] + (
        b'{"context": "A b c", "target": "b", "candidate": "x", "expected": ' + expected + b"}\n"
    )
    with pytest.raises(ImportFailed) as error:
        gold_items_read(data, file=file, gold=scheme_gold("prolex"))

    assert error.value.describe() == message


def test_a_swords_gold_file_does_not_take_prolex_words() -> None:
    data = b'{"context": "A b c", "target": "b", "candidate": "x", "expected": "1"}\n'

    with pytest.raises(ImportFailed) as error:
        gold_items_read(data, file="g.jsonl", gold=scheme_gold("swords"))

    assert error.value.describe() == "g.jsonl, line 1, field 'expected': expected must be accept or reject, not '1'"


def test_a_build_reads_items_written_in_the_schemes_words_and_refuses_one_that_names_neither() -> None:
    benchmark = make_benchmark(scheme="prolex")
    context = "The bright student solved it."
    words = [("clever", "1"), ("smart", "accept"), ("table", "-1"), ("lamp", "-1")]
    items = [GoldItem(context, "bright", 4, candidate, expected) for candidate, expected in words]

    test = qualification_build(benchmark=benchmark, items=items, length=4, pass_mark=1)

    assert sorted(test.items.values_list("candidate", "expected")) == [
        ("clever", "accept"),
        ("lamp", "reject"),
        ("smart", "accept"),
        ("table", "reject"),
    ]
    with pytest.raises(QualificationRefused, match=r"Gold item 2, field 'expected': .* not '0'"):
        qualification_build(
            benchmark=make_benchmark(scheme="prolex"),
            items=[items[0], GoldItem(context, "bright", 4, "x", "0")],
            length=1,
            pass_mark=1,
        )
    with pytest.raises(QualificationRefused, match="none expects -1"):
        qualification_build(benchmark=make_benchmark(scheme="prolex"), items=items[:2], length=2, pass_mark=1)


def test_the_command_builds_a_prolex_test_from_a_file_of_1_and_minus_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_benchmark(name="experts", scheme="prolex")
    gold = tmp_path / "gold.jsonl"
    gold.write_bytes(PROLEX_JSONL)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(PROLEX_JSONL + b'{"context": "A b", "target": "b", "candidate": "x", "expected": "yes"}\n')

    call_command("qualification_build", "experts", "--gold", str(gold), "--length", "4", "--pass-mark", "0.75")

    assert "6 gold items (3 expect 1, 3 expect -1) from file" in capsys.readouterr().out
    assert sorted(QualificationItem.objects.values_list("expected", flat=True)) == ["accept"] * 3 + ["reject"] * 3
    with pytest.raises(CommandError, match=r"bad\.jsonl, line 7, field 'expected': expected must be 1 or -1"):
        call_command("qualification_build", "experts", "--gold", str(bad), "--length", "4", "--pass-mark", "0.75")


def finished_prolex(name: str) -> Benchmark:
    """A ProLex benchmark judged by experts: stored labels, as its answers 1 / -1 / 0 become."""
    benchmark = Benchmark.objects.create(name=name, scheme="prolex")
    context = Context.objects.create(benchmark=benchmark, text="She gave a bright answer.")
    target = Target.objects.create(benchmark=benchmark, context=context, word="bright", offset=11, pos="adj")
    for text, value in (("clever", "accept"), ("smart", "accept"), ("table", "reject"), ("lamp", "reject")):
        candidate = Candidate.objects.create(target=target, text=text)
        Label.objects.bulk_create(
            Label(candidate=candidate, value=value, origin="fixture", position=position) for position in range(2)
        )
    Label.objects.create(candidate=Candidate.objects.get(text="smart"), value="abstain", origin="fixture", position=2)
    return benchmark


def test_a_prolex_test_from_a_benchmarks_clear_scores_over_the_api_speaks_in_1_and_minus_1(cast: Cast) -> None:
    finished_prolex("judged")
    benchmark = make_benchmark(name="experts", scheme="prolex")
    body = {"length": 2, "pass_mark": 1, "from_benchmark": {"benchmark": "judged", "min_labels": 2}}

    built = api(cast.researcher).put(f"/api/benchmarks/{benchmark.name}/qualification", body, format="json")

    assert built.status_code == 200, built.json()
    # "smart" scores 2/3 with its abstention: not clear, so not gold.
    items = sorted((item["candidate"], item["expected"], item["expected_label"]) for item in built.json()["items"])
    assert items == [("clever", "1", "accept"), ("lamp", "-1", "reject"), ("table", "-1", "reject")]
    page = logged_in(cast.researcher).get(f"/benchmarks/{benchmark.name}/qualification/").content.decode()
    assert "3 gold items (1 expects 1, 2 expect -1)" in page
    assert "<td>-1</td>" in page and "<td>reject</td>" not in page


def test_the_api_builds_from_items_written_1_and_minus_1_and_names_a_bad_one(cast: Cast) -> None:
    benchmark = make_benchmark(name="experts", scheme="prolex")
    context = "The bright student solved it."
    items: list[dict[str, Any]] = [
        {"context": context, "target": "bright", "candidate": "clever", "expected": "1"},
        {"context": context, "target": "bright", "candidate": "table", "expected": -1},
        {"context": context, "target": "bright", "candidate": "lamp", "expected": "reject"},
    ]
    client = api(cast.researcher)
    url = f"/api/benchmarks/{benchmark.name}/qualification"

    bad = client.put(
        url, {"length": 2, "pass_mark": 1, "items": [*items, {**items[0], "expected": "0"}]}, format="json"
    )
    built = client.put(url, {"length": 2, "pass_mark": 1, "items": items}, format="json")

    assert bad.status_code == 400
    assert bad.json()["items"] == ["item 4, field 'expected': expected must be 1 or -1 (or accept, reject), not '0'"]
    assert built.status_code == 200
    assert [item["expected"] for item in built.json()["items"]] == ["1", "-1", "-1"]


# --- taking a ProLex test, and its gate ----------------------------------------------------------


def prolex_test(benchmark: Benchmark, *, length: int = 4, pass_mark: float = 0.75) -> QualificationTest:
    items = gold_items_read(PROLEX_JSONL, file="gold.jsonl", gold=scheme_gold("prolex"))
    return qualification_build(benchmark=benchmark, items=items, length=length, pass_mark=pass_mark)


def test_a_prolex_attempt_is_graded_in_its_answers_and_an_answer_the_page_lacks_is_refused(cast: Cast) -> None:
    test = prolex_test(make_benchmark(scheme="prolex"), length=4, pass_mark=0.75)
    attempt = qualification_attempt_start(test=test, worker=cast.alice.worker)
    expected = dict(QualificationItem.objects.filter(pk__in=attempt.items).values_list("pk", "expected"))
    accepts = [pk for pk in attempt.items if expected[pk] == "accept"]
    rejects = [pk for pk in attempt.items if expected[pk] == "reject"]
    assert len(accepts) == len(rejects) == 2

    with pytest.raises(AnswersInvalid, match="Each answer must be 1, -1 or 0"):
        qualification_attempt_submit(attempt=attempt, answers=dict.fromkeys(attempt.items, "accept"))
    # 1 and 1 on the accepts; -1 and 0 on the rejects, but for one accept answered 0: 3 of 4.
    answers = {accepts[0]: "1", accepts[1]: "0", rejects[0]: "-1", rejects[1]: "0"}
    graded = qualification_attempt_submit(attempt=attempt, answers=answers)

    assert (graded.correct, graded.total, graded.passed) == (3, 4, True)
    assert graded.answers == {str(pk): value for pk, value in answers.items()}
    assert not Label.objects.exists()


def test_a_prolex_batchs_hits_reach_an_expert_only_after_passing(cast: Cast) -> None:
    benchmark = make_benchmark(scheme="prolex")
    for word in ("calm", "bright"):
        make_target(benchmark, word=word, pos="", candidates=["still", "serene"])
    test = prolex_test(benchmark)
    alice, bob = Worker.objects.get(user=cast.alice), Worker.objects.get(user=cast.bob)
    hits_generate(benchmark=benchmark, step=1, seed=1, annotators=[alice, bob])

    assert assignment_claim_next(worker=alice) is None
    assert assignment_claim_next(worker=bob) is None
    take(test, alice)
    take(test, bob, wrong=4)

    assert QualificationAttempt.objects.get(worker=alice).passed is True
    assert QualificationAttempt.objects.get(worker=bob).passed is False
    assert assignment_claim_next(worker=alice) is not None
    assert assignment_claim_next(worker=bob) is None
    assert assignment_claim_next(worker=bob, benchmark=benchmark) is None


# --- a scheme that offers no test ----------------------------------------------------------------


def sws_benchmark(cast: Cast) -> Benchmark:
    return make_benchmark(name="marks", scheme="sws")


SWS_MESSAGE = (
    "marks takes no qualification test: its scheme, Smart Word Suggestions (spans and suggestions), offers none"
)


def test_the_pages_of_a_scheme_without_a_test_answer_404_saying_so_and_are_not_linked(cast: Cast) -> None:
    benchmark = sws_benchmark(cast)
    researcher = logged_in(cast.researcher)

    detail = researcher.get(f"/benchmarks/{benchmark.name}/qualification/")
    take_page = logged_in(cast.alice).get(f"/work/qualification/{benchmark.name}/")
    switch = researcher.post(f"/benchmarks/{benchmark.name}/qualification/active/", {"active": "1"})
    reset = researcher.post(f"/benchmarks/{benchmark.name}/qualification/attempts/1/reset/")
    home = researcher.get(f"/benchmarks/{benchmark.name}/")

    assert detail.status_code == 404 and SWS_MESSAGE in detail.content.decode()
    assert take_page.status_code == 404 and SWS_MESSAGE in take_page.content.decode()
    assert (switch.status_code, reset.status_code) == (404, 404)
    assert home.status_code == 200
    assert f"/benchmarks/{benchmark.name}/qualification/" not in home.content.decode()
    assert not QualificationAttempt.objects.exists()
    # A benchmark whose scheme offers one links it.
    other = make_benchmark(name="judged", scheme="prolex")
    assert "/benchmarks/judged/qualification/" in researcher.get(f"/benchmarks/{other.name}/").content.decode()


def test_the_api_of_a_scheme_without_a_test_answers_404_saying_so(cast: Cast) -> None:
    benchmark = sws_benchmark(cast)
    researcher = api(cast.researcher)
    body = {
        "length": 1,
        "pass_mark": 1,
        "items": [{"context": "A b", "target": "b", "candidate": "x", "expected": "accept"}],
    }

    answers = {
        "read": researcher.get(f"/api/benchmarks/{benchmark.name}/qualification"),
        "build": researcher.put(f"/api/benchmarks/{benchmark.name}/qualification", body, format="json"),
        "attempts": researcher.get(f"/api/benchmarks/{benchmark.name}/qualification/attempts"),
        "take": api(cast.alice).get(f"/api/work/qualification/{benchmark.name}"),
        "submit": api(cast.alice).post(
            f"/api/work/qualification/{benchmark.name}/submit", {"answers": {}}, format="json"
        ),
    }

    assert {name: answer.status_code for name, answer in answers.items()} == dict.fromkeys(answers, 404)
    assert {name: answer.json()["detail"] for name, answer in answers.items()} == dict.fromkeys(
        answers, SWS_MESSAGE + " (docs/qualification.md)."
    )
    assert not QualificationTest.objects.exists()


def test_the_command_refuses_a_scheme_without_a_test(cast: Cast, tmp_path: Path) -> None:
    benchmark = sws_benchmark(cast)
    gold = tmp_path / "gold.jsonl"
    gold.write_bytes(PROLEX_JSONL)

    with pytest.raises(CommandError, match=r"marks takes no qualification test: its scheme, Smart Word Suggestions"):
        call_command("qualification_build", benchmark.name, "--gold", str(gold), "--length", "2", "--pass-mark", "1")
    with pytest.raises(CommandError, match="marks takes no qualification test"):
        call_command(
            "qualification_build", benchmark.name, "--from-benchmark", "marks", "--length", "1", "--pass-mark", "1"
        )
    assert not QualificationTest.objects.exists()
