"""ProLex's pure rules: what labels decide, CEFR levels and the proficiency rule, the quadruplet."""

from __future__ import annotations

import pytest

from schemes.prolex.levels import UNKNOWN, effective_level, estimated_level, from_file, proficiency_oriented, to_file
from schemes.prolex.rules import ACCEPTABLE, UNACCEPTABLE, Judged, decision, marked_sentence, quadruplet


@pytest.mark.parametrize(
    ("ones", "minus_ones", "expected"),
    [(1, 0, ACCEPTABLE), (2, 1, ACCEPTABLE), (0, 1, UNACCEPTABLE), (1, 1, None), (0, 0, None)],
)
def test_more_ones_than_minus_ones_make_a_substitute_acceptable_and_ties_decide_nothing(
    ones: int, minus_ones: int, expected: str | None
) -> None:
    assert decision(ones=ones, minus_ones=minus_ones) == expected


def test_every_occurrence_of_the_target_is_marked_even_inside_a_longer_word() -> None:
    assert marked_sentence("It is useful to use a map.", "use") == "It is **use**ful to **use** a map."


def test_levels_are_written_as_prolex_writes_them() -> None:
    assert [from_file(raw) for raw in (0, 5, 6, -1, "None")] == [0, 5, 6, -1, None]
    assert [to_file(level) for level in (3, None)] == [3, "None"]


def test_cefrpy_estimates_words_and_knows_no_level_for_a_phrase() -> None:
    assert estimated_level("generally") == 2  # B1
    assert estimated_level("Fundamentally") == 4  # C1, whatever the case
    assert estimated_level("xqzzy") == UNKNOWN
    assert estimated_level("on their own") is None


def test_the_researchers_level_wins_over_an_imported_one_which_wins_over_the_estimate() -> None:
    assert effective_level(text="generally", cefr="C2", imported=0, has_imported=True) == 5
    assert effective_level(text="generally", imported=-1, has_imported=True) == -1
    assert effective_level(text="generally", imported="None", has_imported=True) is None
    assert effective_level(text="generally") == 2


@pytest.mark.parametrize(
    ("substitute", "target", "kept"),
    [(3, 3, True), (4, 3, True), (2, 3, False), (None, 3, True), (2, None, True), (-1, 0, False), (UNKNOWN, 5, True)],
)
def test_a_substitute_is_proficiency_oriented_from_the_targets_level_up_and_a_phrase_is_kept(
    substitute: int | None, target: int | None, kept: bool
) -> None:
    assert proficiency_oriented(substitute=substitute, target=target) is kept


def test_a_quadruplet_lists_acceptable_substitutes_and_sorts_them_by_level() -> None:
    row = quadruplet(
        target="overall",
        text="Both matter, but overall, I disagree.",
        target_level=3,
        substitutes=[
            Judged("generally", ones=1, minus_ones=0, level=2),
            Judged("fundamentally", ones=2, minus_ones=0, level=4),
            Judged("all in all", ones=1, minus_ones=0, level=None),
            Judged("mostly", ones=0, minus_ones=1, level=2),
            Judged("primarily", ones=1, minus_ones=1, level=3),
        ],
    )
    assert row is not None
    assert row.sentence == "Both matter, but **overall**, I disagree."
    assert row.acc_subs == ["generally", "fundamentally", "all in all"]
    assert row.unacc_subs == ["mostly"]
    assert (row.prof_acc_subs, row.prof_acc_cefr) == (["fundamentally", "all in all"], [4, "None"])
    assert (row.prof_unacc_subs, row.prof_unacc_cefr) == (["generally"], [2])
    assert row.t_words_cefr == 3


def test_a_target_without_an_acceptable_substitute_has_no_quadruplet() -> None:
    judged = [Judged("mostly", ones=0, minus_ones=2, level=2), Judged("chiefly", ones=1, minus_ones=1, level=4)]
    assert quadruplet(target="overall", text="overall", target_level=3, substitutes=judged) is None
