"""The generation task's pure rules: proposals checked, lemmatised by the target's part of speech, merged with votes."""

from __future__ import annotations

import pytest

from schemes.base import AnswerRefused
from schemes.swords.proposals.rules import NONE, PROPOSED, clean_proposals, lemma, merge_proposals


@pytest.mark.parametrize(
    ("text", "pos", "expected"),
    [
        ("ran", "verb", "run"),
        ("gave up", "verb", "give up"),
        ("mice", "noun", "mouse"),
        ("ice creams", "noun", "ice cream"),
        ("Happier", "adj", "happy"),
        ("  quickly ", "adv", "quickly"),
        ("Paris", "", "Paris"),
    ],
)
def test_a_proposal_is_lemmatised_by_the_targets_part_of_speech_a_phrase_by_its_head(
    text: str, pos: str, expected: str
) -> None:
    assert lemma(text, pos) == expected


def test_proposals_keep_their_spelling_and_lemmas_without_repeats() -> None:
    value, data = clean_proposals(
        '{"substitutes": ["hurried", " dashed  off", "Hurried", "", "hurry"], "none": false}', target="ran", pos="verb"
    )
    assert value == PROPOSED
    assert data == {"substitutes": ["hurried", "dashed off", "hurry"], "lemmas": ["hurry", "dash off"], "none": False}
    assert clean_proposals({"substitutes": [], "none": True}, target="ran", pos="verb") == (
        NONE,
        {"substitutes": [], "lemmas": [], "none": True},
    )


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"substitutes": []}, "Type at least one substitute"),
        ({"substitutes": ["sped"], "none": True}, "keep one of the two"),
        ({"substitutes": ["a", "b", "c", "d", "e", "f"]}, "at most 5"),
        ({"substitutes": ["Ran"]}, "is the word itself"),
        ({"substitutes": "sped"}, "must be a list"),
        ("{", "could not be read"),
    ],
)
def test_bad_proposals_are_refused_saying_what_to_fix(answer: object, message: str) -> None:
    with pytest.raises(AnswerRefused, match=message):
        clean_proposals(answer, target="ran", pos="verb")


def test_proposals_merge_into_votes_by_annotator_most_voted_first() -> None:
    merged = merge_proposals([(1, ["hurry", "dash"], False), (2, ["Hurry", "race"], False), (3, [], True)])
    assert merged.votes == {"hurry": 2, "dash": 1, "race": 1}
    assert (merged.proposers, merged.none) == (3, 1)
