"""The TSAR-2022 metrics and TSV files (schemes/tsar/metrics.py, schemes/tsar/tsv.py): hand-made
predictions whose figures are worked out below, and the trial gold files of the three languages
judged by themselves (docs/evaluation.md, "TSAR-2022")."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from annotation.importers.errors import ImportFailed
from schemes.tsar.metrics import (
    FIGURE_NAMES,
    GoldInstance,
    Prediction,
    UnknownInstance,
    evaluate,
    figures_of,
    floor,
    gold_as_predictions,
    gold_index,
)
from schemes.tsar.tsv import read_gold, read_predictions

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "tsar2022"

GOLD = (
    # "sat": rested 3, stayed 3 (a tie at the top count), perched 1; the two "sat" are the complex word.
    "The cat sat.\tsat\trested\trested\trested\tstayed\tstayed\tstayed\tperched\tsat\tsat\n"
    # "big": large 3, huge 1, great 1; top {large}.
    "A big dog.\tbig\tlarge\tlarge\thuge\tlarge\tgreat\n"
    # "left": went 2, departed 1, exited 1; top {went}.
    "He left.\tleft\twent\tdeparted\twent\texited\n"
    # "fast": quickly 2, rapidly 1; top {quickly}.
    "She ran fast.\tfast\tquickly\tquickly\trapidly\n"
)

PREDICTIONS = (
    # Scored: perched, stayed, sofa (the complex word and the second "perched" dropped); gold: T T F.
    "The cat sat.\tsat\tsat\tperched\tperched\tstayed\tsofa\n"
    "\n"  # a blank line names no instance: skipped
    # Trimmed: "A big dog." / "big"; huge, "" (an empty field keeps its rank), large; the trailing
    # empty field is dropped. Gold: T F T. Windows line ending.
    "  A big dog.  \t big \t huge\t\tlarge \t\r\n"
    # No predictions: a miss everywhere.
    "He left.\tleft\n"
    # speedily, swiftly, briskly, hastily, quickly ("fast" dropped): the only hit is at rank 5.
    "She ran fast.\tfast\tspeedily\tswiftly\tfast\tbriskly\thastily\tquickly\n"
)


def _gold(text: str = GOLD) -> dict[tuple[str, str], GoldInstance]:
    return gold_index(read_gold(io.StringIO(text), file="gold.tsv"))


def _figures(predictions: str, gold: str = GOLD) -> dict[str, float]:
    figures, _per_line = evaluate(_gold(gold), read_predictions(io.BytesIO(predictions.encode()), file="pred.tsv"))
    return figures


def test_hand_made_predictions_give_the_figures_worked_out_by_hand() -> None:
    figures = _figures(PREDICTIONS)

    # Four lines count (the blank one does not), the line without predictions among them.
    # ACC@1: perched (gold) + huge (gold) + nothing + speedily (not) = 2 / 4.
    assert figures["acc@1"] == 0.5
    # ACC@1@Top1: perched is not top {rested, stayed}, huge is not top {large}: 0 / 4.
    assert figures["acc@1@top1"] == 0.0
    # ACC@2@Top1: "stayed" ties for the top count of "sat": 1 / 4.
    assert figures["acc@2@top1"] == 0.25
    # ACC@3@Top1: and "large" at rank 3 of "big" (after the empty field): 2 / 4.
    assert figures["acc@3@top1"] == 0.5
    # MAP@3: sat (1/1 + 2/2) / 3 = 2/3; big (1/1 + 2/3) / 3 = 5/9; 0; 0 -> (6/9 + 5/9) / 4 = 11/36
    # = 0.30555..., floored 0.3055 (rounding would give 0.3056).
    assert figures["map@3"] == 0.3055
    # MAP@5: 2/5 + (5/3)/5 + 0 + (1/5)/5 = 0.4 + 0.3333 + 0.04 = 0.77333 / 4 = 0.19333 -> 0.1933.
    assert figures["map@5"] == 0.1933
    # MAP@10: 2/10 + (5/3)/10 + 0 + (1/5)/10 = 0.38667 / 4 = 0.096667 -> 0.0966 (rounded: 0.0967).
    assert figures["map@10"] == 0.0966
    # Potential@3: sat, big = 2 / 4; @5 and @10: and "quickly" at rank 5 of "fast" = 3 / 4.
    assert (figures["potential@3"], figures["potential@5"], figures["potential@10"]) == (0.5, 0.75, 0.75)
    assert list(figures) == list(FIGURE_NAMES)


def test_each_line_scores_after_trimming_dropping_repeats_and_the_complex_word() -> None:
    predictions = read_predictions(io.BytesIO(PREDICTIONS.encode()), file="pred.tsv")

    assert [prediction.line for prediction in predictions] == [1, 3, 4, 5]
    assert [prediction.ranked() for prediction in predictions] == [
        ["perched", "stayed", "sofa"],
        ["huge", "", "large"],
        [],
        ["speedily", "swiftly", "briskly", "hastily", "quickly"],
    ]
    _figures, per_line = evaluate(_gold(), predictions)
    assert [line["potential@5"] for line in per_line] == [1.0, 1.0, 0.0, 1.0]
    assert per_line[1]["map@3"] == pytest.approx(5 / 9)


def test_the_gold_counts_each_annotator_and_leaves_out_the_complex_word() -> None:
    sat = _gold()[("The cat sat.", "sat")]

    assert sat.counts() == {"rested": 3, "stayed": 3, "perched": 1}
    assert sat.top() == {"rested", "stayed"}
    assert sat.ranked() == ["rested", "stayed", "perched"]


def test_a_repeated_prediction_counts_once_at_its_first_rank() -> None:
    # "huge, huge, large": huge T at 1, large T at 2 (the second huge is gone): MAP@3 = (1 + 1) / 3.
    figures = _figures("A big dog.\tbig\thuge\thuge\tlarge\n")
    # Without the drop, large would sit at rank 3: (1 + 2/3) / 3 = 0.5555.
    assert figures["map@3"] == 0.6666
    assert figures["acc@2@top1"] == 1.0


def test_only_the_lines_of_the_predictions_file_count() -> None:
    # One line of four gold instances, a hit: every figure of presence is 1 / 1.
    figures = _figures("A big dog.\tbig\tlarge\n")

    assert figures["acc@1"] == figures["acc@1@top1"] == figures["potential@10"] == 1.0
    # One hit of ten positions: 1 / 10.
    assert figures["map@10"] == 0.1


def test_an_instance_without_gold_substitutes_is_a_miss() -> None:
    # Every annotator repeated the complex word: no gold, no top; nothing can match.
    gold = "It was odd.\todd\todd\todd\n"
    instance = _gold(gold)[("It was odd.", "odd")]

    assert instance.substitutes() == frozenset() and instance.top() == frozenset()
    assert set(_figures("It was odd.\todd\tstrange\n", gold).values()) == {0.0}


def test_figures_are_floored_with_the_scorers_arithmetic() -> None:
    # 2/3 = 0.66666... -> 0.6666; 0.57 * 10000 is 5699.999999999999 in floating point, so the
    # scorer's floor(value * 10000) / 10000 gives 0.5699: the figure is the scorer's, not 0.57.
    assert floor(2 / 3) == 0.6666
    assert floor(0.57) == 0.5699
    hits = [dict.fromkeys(FIGURE_NAMES, 1.0)] * 57 + [dict.fromkeys(FIGURE_NAMES, 0.0)] * 43
    assert figures_of(hits)["acc@1"] == 0.5699
    assert set(figures_of([]).values()) == {0.0}


def test_a_prediction_for_an_instance_the_gold_lacks_is_named_by_its_line() -> None:
    predictions = read_predictions(io.StringIO("A big dog.\tbig\tlarge\nA red dog.\tred\tcrimson\n"), file="p.tsv")

    with pytest.raises(UnknownInstance, match=r"line 2: no instance of the gold .* complex word 'red'"):
        evaluate(_gold(), predictions)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("A big dog.\n", "p.tsv, line 1, field 'complex word': .* has no tab"),
        ("A big dog.\tbig\tlarge\n\tbig\thuge\n", "p.tsv, line 2, field 'sentence': the sentence is empty"),
        ("A big dog.\t  \tlarge\n", "p.tsv, line 1, field 'complex word': the complex word is empty"),
        ("A big dog.\tbig\tlarge\nA big dog. \tbig\thuge\n", "p.tsv, line 2, field 'complex word': .* of line 1 again"),
        ("\n  \n", "p.tsv: the file holds no predictions"),
    ],
)
def test_a_malformed_predictions_file_is_refused_naming_line_and_field(text: str, message: str) -> None:
    with pytest.raises(ImportFailed, match=message):
        read_predictions(io.StringIO(text), file="p.tsv")


def test_bytes_that_are_not_utf8_are_named_by_line_and_position() -> None:
    stream = io.BytesIO(b"A big dog.\tbig\tlarge\n" + b"El d\xeda.\td\xeda\tjornada\n")

    with pytest.raises(ImportFailed, match=r"p.tsv, line 2: not UTF-8 text: byte 0xed at position 5"):
        read_predictions(stream, file="p.tsv")


def test_a_byte_order_mark_and_text_streams_are_taken() -> None:
    as_bytes = read_predictions(io.BytesIO(("\ufeff" + PREDICTIONS).encode()), file="p.tsv")
    as_text = read_predictions(io.StringIO(PREDICTIONS, newline=""), file="p.tsv")

    assert as_bytes == as_text
    assert as_bytes[0].sentence == "The cat sat."


def test_the_gold_refuses_an_instance_listed_twice() -> None:
    with pytest.raises(ImportFailed, match=r"gold.tsv, line 5, field 'complex word': .* of line 1 again"):
        read_gold(io.StringIO(GOLD + "The cat sat.\tsat\trested\n"), file="gold.tsv")


# The trial gold files judged by themselves, each instance's substitutes ranked by count (ties in
# the order first given), the complex word left out. Every instance has a gold substitute, so every
# accuracy and potential is 1. MAP@k of an instance with n distinct substitutes is min(k, n) / k:
# every instance has at least 5 (Portuguese "sensores" has exactly 5), so MAP@3 = MAP@5 = 1; MAP@10:
# - en: n = 9, 17, 13, 10, 12, 10, 14, 8, 15, 10 -> (9 + 10 + 10 + 10 + 10 + 10 + 10 + 8 + 10 + 10) / 100 = 0.97;
# - es: n = 9, 8, 15, 9, 12, 10, 9, 8, 8, 11, 13, 12 -> 111 / 120 = 0.925;
# - pt: n = 10, 5, 8, 7, 7, 7, 6, 7, 7, 8 -> 72 / 100 = 0.72.
TRIAL_MAP_AT_10 = {"en": 0.97, "es": 0.925, "pt": 0.72}


@pytest.mark.parametrize("language", ["en", "es", "pt"])
def test_each_trial_gold_judged_by_itself_is_perfect_but_for_map_at_ten(language: str) -> None:
    with (FIXTURES / f"tsar2022_{language}_trial_gold.tsv").open("rb") as stream:
        gold = read_gold(stream, file="gold.tsv")
    distinct = [len(instance.substitutes()) for instance in gold]

    figures, _per_line = evaluate(gold_index(gold), gold_as_predictions(gold))

    assert len(gold) == {"en": 10, "es": 12, "pt": 10}[language]
    assert min(distinct) >= 5
    assert sum(min(10, n) for n in distinct) / (10 * len(gold)) == pytest.approx(TRIAL_MAP_AT_10[language])
    assert {name: value for name, value in figures.items() if name != "map@10"} == dict.fromkeys(
        (name for name in FIGURE_NAMES if name != "map@10"), 1.0
    )
    assert figures["map@10"] == TRIAL_MAP_AT_10[language]


@pytest.mark.parametrize("language", ["en", "es", "pt"])
def test_each_trial_file_without_predictions_misses_every_line(language: str) -> None:
    with (FIXTURES / f"tsar2022_{language}_trial_gold.tsv").open("rb") as stream:
        gold = gold_index(read_gold(stream, file="gold.tsv"))
    with (FIXTURES / f"tsar2022_{language}_trial_none.tsv").open("rb") as stream:
        predictions = read_predictions(stream, file="none.tsv")

    figures, per_line = evaluate(gold, predictions)

    assert len(per_line) == len(gold)
    assert set(figures.values()) == {0.0}


def test_the_gold_of_the_trial_files_keeps_every_annotators_suggestion() -> None:
    with (FIXTURES / "tsar2022_en_trial_gold.tsv").open("rb") as stream:
        shrapnel = next(
            instance for instance in read_gold(stream, file="gold.tsv") if instance.complex_word == "shrapnel"
        )

    # 25 suggestions, eight of them the complex word itself, which is no gold substitute.
    assert len(shrapnel.annotations) == 25
    assert sum(shrapnel.counts().values()) == 25 - 8
    assert Prediction("s", "shrapnel", ("shrapnel", "x")).ranked() == ["x"]
