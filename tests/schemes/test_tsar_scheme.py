"""The lexical simplification scheme (TSAR-2022): the trial files of three languages import, export
back byte for byte, show their figures and evaluate; answers typed here are checked, counted and
exported most frequent first; the dataset folder's card states the language (docs/design.md §12)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command

from analysis.services import benchmark_export
from analysis.services.dataset import benchmark_dataset_write
from annotation.models import Benchmark, Target, Worker
from annotation.services import ImportFailed, benchmark_import
from hits.models import HITItem
from hits.services import assignment_claim_next, assignment_submit, hits_generate
from schemes import get_scheme
from schemes.base import AnswerRefused, AnswersInvalid
from schemes.tsar.answers import clean_suggestion
from tests.base import Cast, logged_in

pytestmark = pytest.mark.django_db

TRIAL = Path(__file__).resolve().parent.parent / "fixtures" / "tsar2022"
LANGUAGES = ("en", "es", "pt")
# MAP@10 of each trial gold judged by itself (docs/evaluation.md, "TSAR-2022").
ORACLE_MAP10 = {"en": 0.97, "es": 0.925, "pt": 0.72}


def _export(benchmark: Benchmark, fmt: str = "tsar") -> str:
    out = io.StringIO()
    benchmark_export(benchmark=benchmark, format=fmt, out=out)
    return out.getvalue()


def _import(path: Path | io.BytesIO, name: str, fmt: str = "tsar") -> Benchmark:
    benchmark_import(path_or_file=path, benchmark_name=name, fmt=fmt)
    return Benchmark.objects.get(name=name)


# --- import and export ------------------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("kind", ["gold", "none"])
def test_each_trial_file_imports_and_exports_back_byte_for_byte(language: str, kind: str) -> None:
    path = TRIAL / f"tsar2022_{language}_trial_{kind}.tsv"
    # The format is found from the file's first bytes.
    benchmark = _import(path, f"trial-{language}-{kind}", fmt="auto")

    assert benchmark.scheme == "tsar"
    assert _export(benchmark).encode("utf-8") == path.read_bytes()
    lines = path.read_text(encoding="utf-8").splitlines()
    targets = list(Target.objects.filter(benchmark=benchmark).select_related("context").order_by("pk"))
    assert len(targets) == len(lines)
    for target, line in zip(targets, lines, strict=True):
        sentence, word = line.split("\t")[:2]
        # The target is the first occurrence of the complex word; no English resource gave it a lemma or tag.
        assert (target.context.text, target.word, target.offset) == (sentence, word, sentence.index(word))
        assert (target.lemma, target.pos) == (word, "")


def test_a_complex_word_the_sentence_lacks_is_refused_naming_line_and_field() -> None:
    data = io.BytesIO("Una frase sencilla.\tsencilla\tfácil\nOtra frase más.\tcompleja\tdifícil\n".encode())
    data.name = "bad_gold.tsv"

    with pytest.raises(ImportFailed) as raised:
        benchmark_import(path_or_file=data, benchmark_name="bad", fmt="tsar")
    assert "bad_gold.tsv, line 2, field 'complex word'" in str(raised.value) and "compleja" in str(raised.value)
    assert not Target.objects.exists()


def test_a_line_without_a_tab_is_refused_and_nothing_is_written() -> None:
    data = io.BytesIO(b"Una frase sencilla.\tsencilla\nOtra frase sin tabulador\n")
    data.name = "bad_none.tsv"

    with pytest.raises(ImportFailed) as raised:
        benchmark_import(path_or_file=data, benchmark_name="bad", fmt="tsar")
    assert "bad_none.tsv, line 2, field 'complex word'" in str(raised.value)
    assert not Target.objects.exists() and not Benchmark.objects.filter(name="bad").exists()


# --- figures ----------------------------------------------------------------------------------

# Worked out by hand. Line 1: confirmó 2, aprobó 2, firmó 1 (the complex word is no suggestion): a tie
# at the top, 5 suggestions, 3 distinct, top share 2/5. Line 2: vieja 3, pasada 1: 4 suggestions,
# 2 distinct, top share 3/4. Line 3: no suggestion.
HAND_GOLD = (
    "¿Quién ratificó el acuerdo en junio?\tratificó\tconfirmó\taprobó\tconfirmó\tfirmó\taprobó\tratificó\n"
    "El niño comió una manzana añeja.\tañeja\tvieja\tvieja\tvieja\tpasada\n"
    "La reunión fue pospuesta.\tpospuesta\n"
)


@pytest.fixture
def hand() -> Benchmark:
    data = io.BytesIO(HAND_GOLD.encode())
    data.name = "hand_gold.tsv"
    benchmark = _import(data, "hand")
    Benchmark.objects.filter(pk=benchmark.pk).update(language="es")
    return Benchmark.objects.get(pk=benchmark.pk)


def test_the_statistics_count_suggestions_distinct_substitutes_and_agreement_on_the_top(
    hand: Benchmark, cast: Cast
) -> None:
    figures = logged_in(cast.researcher).get(f"/api/benchmarks/{hand.name}/statistics").json()

    assert (figures["scheme"], figures["language"], figures["instances"], figures["suggestions"]) == (
        "tsar",
        "es",
        3,
        9,
    )
    assert figures["instances_without_suggestions"] == 1
    assert figures["per_instance"]["suggestions"] == pytest.approx(3.0)
    assert figures["per_instance"]["distinct_substitutes"] == pytest.approx(5 / 3)
    assert figures["agreement"] == {"top_share": pytest.approx((0.4 + 0.75) / 2), "instances": 2}


def test_the_statistics_page_shows_the_figures_and_three_plots(hand: Benchmark, cast: Cast) -> None:
    client = logged_in(cast.researcher)
    page = client.get(f"/benchmarks/{hand.name}/statistics/")
    assert page.status_code == 200
    assert b"per_instance.distinct_substitutes" in page.content
    for plot in ("suggestions", "substitutes", "agreement"):
        svg = client.get(f"/benchmarks/{hand.name}/plots/{plot}.svg")
        assert svg.status_code == 200 and b"<svg" in svg.content, plot
    # The agreement plot puts line 1 (2/5) in 40-50 % and line 2 (3/4) in 70-80 %.
    agreement = client.get(f"/benchmarks/{hand.name}/plots/agreement.svg").content.decode()
    assert "40-50 %" in agreement and "70-80 %" in agreement


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_trial_golds_show_their_figures(language: str) -> None:
    path = TRIAL / f"tsar2022_{language}_trial_gold.tsv"
    benchmark = _import(path, f"figures-{language}")
    lines = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    stats = json.loads(_export(benchmark, "stats"))

    assert stats["instances"] == len(lines)
    # Every column after the word is one annotator's suggestion; the word itself (which some annotators
    # of the English and Spanish files gave) is no suggestion.
    assert stats["released_suggestions"] == sum(len(fields) - 2 for fields in lines)
    assert stats["suggestions"] == sum(1 for fields in lines for text in fields[2:] if text != fields[1])
    assert stats["suggestions"] < stats["released_suggestions"] or language == "pt"
    assert 0 < stats["agreement"]["top_share"] < 1


# --- evaluation -------------------------------------------------------------------------------

# Line 1: "ratificó" (the complex word) and the second "aprobó" are dropped: aprobó (gold, tied top),
# firmó (gold), dijo. Line 2: pasada (gold, not top), an empty field holding rank 2, vieja (gold, top).
# Line 3: no prediction, a miss. A blank line in between names no instance.
#   ACC@1 = 2/3; ACC@1@Top1 = ACC@2@Top1 = 1/3; ACC@3@Top1 = 2/3;
#   MAP@3 = (2/3 + (1 + 2/3)/3 + 0) / 3 = 11/27 = 0.4074; MAP@5 = (2/5 + 1/3) / 3 = 11/45 = 0.2444;
#   MAP@10 = (1/5 + 1/6) / 3 = 11/90 = 0.1222; Potential@k = 2/3 = 0.6666 (floored).
HAND_PREDICTIONS = (
    "¿Quién ratificó el acuerdo en junio?\tratificó\tratificó\taprobó\taprobó\tfirmó\tdijo\n"
    "\n"
    "El niño comió una manzana añeja.\tañeja\tpasada\t\tvieja\n"
    "La reunión fue pospuesta.\tpospuesta\t\n"
)
HAND_FIGURES = {
    "acc@1": 0.6666,
    "acc@1@top1": 0.3333,
    "acc@2@top1": 0.3333,
    "acc@3@top1": 0.6666,
    "map@3": 0.4074,
    "map@5": 0.2444,
    "map@10": 0.1222,
    "potential@3": 0.6666,
    "potential@5": 0.6666,
    "potential@10": 0.6666,
    "instances": 3,
    "instances_missing": 0,
}


def _evaluate(name: str, path: Path, *options: str) -> dict[str, Any]:
    out = io.StringIO()
    call_command("evaluate_system", name, "--result", str(path), "--json", *options, stdout=out)
    result: dict[str, Any] = json.loads(out.getvalue())
    return result


def test_the_command_evaluates_hand_made_predictions_with_the_official_json_names(
    hand: Benchmark, tmp_path: Path
) -> None:
    path = tmp_path / "predictions.tsv"
    path.write_text(HAND_PREDICTIONS, encoding="utf-8")

    assert _evaluate(hand.name, path) == HAND_FIGURES

    text = io.StringIO()
    call_command("evaluate_system", hand.name, "--result", str(path), stdout=text)
    assert "MAP@3" in text.getvalue() and "0.4074" in text.getvalue()


def test_an_instance_left_out_is_counted_missing_and_an_unknown_one_is_refused(hand: Benchmark, tmp_path: Path) -> None:
    path = tmp_path / "one.tsv"
    path.write_text("El niño comió una manzana añeja.\tañeja\tvieja\n", encoding="utf-8")
    figures = _evaluate(hand.name, path)
    assert (figures["acc@1"], figures["acc@1@top1"], figures["instances"], figures["instances_missing"]) == (1, 1, 1, 2)

    unknown = tmp_path / "unknown.tsv"
    unknown.write_text("El niño comió una pera.\tpera\tfruta\n", encoding="utf-8")
    with pytest.raises(Exception, match="line 1"):
        _evaluate(hand.name, unknown)


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_trial_gold_evaluates_its_own_ranking_as_the_oracle_does(language: str, tmp_path: Path) -> None:
    benchmark = _import(TRIAL / f"tsar2022_{language}_trial_gold.tsv", f"eval-{language}")
    # The gold ranked by count, written as a system's predictions (ties in the order first given).
    lines = []
    for line in (TRIAL / f"tsar2022_{language}_trial_gold.tsv").read_text(encoding="utf-8").splitlines():
        sentence, word, *suggestions = line.split("\t")
        ranked = sorted(
            dict.fromkeys(suggestions), key=lambda text: (-suggestions.count(text), suggestions.index(text))
        )
        lines.append("\t".join([sentence, word, *ranked]))
    path = tmp_path / "ranked.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    figures = _evaluate(benchmark.name, path)

    assert figures["acc@1"] == figures["acc@3@top1"] == figures["potential@10"] == 1.0
    assert figures["map@10"] == ORACLE_MAP10[language]
    board = _leaderboard(benchmark)
    assert board["map@10"] == ORACLE_MAP10[language]


def _leaderboard(benchmark: Benchmark) -> dict[str, Any]:
    from analysis.evaluation import EvaluationOptions, scheme_evaluator

    evaluator = scheme_evaluator(benchmark)
    assert evaluator is not None
    oracle = evaluator.oracle(benchmark, EvaluationOptions())
    assert oracle is not None
    return oracle


# --- collected work ---------------------------------------------------------------------------


def test_answers_are_checked_in_any_language() -> None:
    check = clean_suggestion
    assert check({"substitute": "  de  folclore ", "none": False}, complex_word="folclórico", max_length=100) == (
        "suggested",
        {"substitute": "de folclore", "none": False},
    )
    assert check('{"substitute": "atualmente"}', complex_word="hodiernamente", max_length=100)[0] == "suggested"
    assert check({"none": True}, complex_word="añeja", max_length=100) == ("none", {"substitute": "", "none": True})
    refused = {
        "the word itself, in capitals": {"substitute": "Añeja"},
        "empty": {"substitute": "   "},
        "no letter": {"substitute": "1234"},
        "a symbol": {"substitute": "vie#ja"},
        "both": {"substitute": "vieja", "none": True},
        "too long": {"substitute": "a" * 11},
    }
    for why, raw in refused.items():
        with pytest.raises(AnswerRefused):
            check(raw, complex_word="añeja", max_length=10)
            pytest.fail(why)


def _collect(benchmark: Benchmark, answers: dict[str, Any], cast: Cast) -> None:
    hits_generate(benchmark=benchmark, step=1, seed=1)
    for user in (cast.alice, cast.bob, cast.carol):
        assignment = assignment_claim_next(worker=Worker.objects.get(user=user), benchmark=benchmark)
        assert assignment is not None
        [item] = HITItem.objects.filter(hit_id=assignment.hit_id)
        assignment_submit(assignment=assignment, answers={item.pk: answers[user.username]})


def test_collected_suggestions_are_exported_most_frequent_first_after_the_released_ones(cast: Cast) -> None:
    data = io.BytesIO("La leyenda añeja del pueblo.\tañeja\tvieja\n".encode())
    data.name = "one_gold.tsv"
    benchmark = _import(data, "collect")
    benchmark.scheme_settings = {"annotators_per_instance": 3}
    benchmark.save()
    answers = {
        "alice": {"substitute": "antigua", "none": False},
        "bob": {"substitute": "vieja", "none": False},
        "carol": {"substitute": "antigua", "none": False},
    }
    _collect(benchmark, answers, cast)

    assert _export(benchmark) == "La leyenda añeja del pueblo.\tañeja\tvieja\tantigua\tantigua\tvieja\n"
    raw = [json.loads(line) for line in _export(benchmark, "answers-jsonl").splitlines()]
    assert sorted(row["data"]["substitute"] for row in raw) == ["antigua", "antigua", "vieja"]
    assert "antigua" in _export(benchmark, "answers-csv")


def test_the_page_refuses_the_complex_word_itself(cast: Cast) -> None:
    data = io.BytesIO("La leyenda añeja del pueblo.\tañeja\n".encode())
    data.name = "one_none.tsv"
    benchmark = _import(data, "refuse")
    hits_generate(benchmark=benchmark, step=1, seed=1)
    assignment = assignment_claim_next(worker=Worker.objects.get(user=cast.alice), benchmark=benchmark)
    assert assignment is not None
    [item] = HITItem.objects.filter(hit_id=assignment.hit_id)
    with pytest.raises(AnswersInvalid, match="highlighted word itself"):
        assignment_submit(assignment=assignment, answers={item.pk: {"substitute": "AÑEJA", "none": False}})
    assert get_scheme(benchmark).settings(benchmark).to_json()["annotators_per_instance"] == 25


def test_the_dataset_folder_states_the_language_and_holds_the_gold_tsv(hand: Benchmark, tmp_path: Path) -> None:
    folder = tmp_path / "hand"
    benchmark_dataset_write(benchmark=hand, directory=folder)

    card = (folder / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(card.split("---\n")[1])
    assert header["language"] == ["es"]
    assert "## Language" in card and "`es`" in card
    released = next(folder.rglob("*.tsv"))
    assert released.read_text(encoding="utf-8") == HAND_GOLD
    instances = [json.loads(line) for line in next(folder.glob("instances/*.jsonl")).read_text().splitlines()]
    assert instances[0]["substitutes"] == ["confirmó", "aprobó", "firmó"] and instances[0]["counts"] == [2, 2, 1]
