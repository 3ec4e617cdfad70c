"""Smart Word Suggestions' pure rules: tokens and spans, the checks of an answer, the merge, PA-det and PA-sug."""

from __future__ import annotations

import pytest

from analysis.agreement import pairwise_jaccard
from schemes.base import AnswerRefused
from schemes.sws.answers import DISCARDED, MARKED, clean_answer
from schemes.sws.merge import DIVERSIFY_EXPRESSION, REFINE_USAGE, Marked, merge
from schemes.sws.tokens import TokensMisaligned, align, token_span, tokenize


def test_penn_treebank_tokens_are_found_in_their_sentence_quotes_and_no_break_spaces_included() -> None:
    sentence = 'He said "we don\'t know"\u00a0and left.'
    tokens = ["He", "said", "``", "we", "do", "n't", "know", "''", "and", "left", "."]
    assert align(sentence, tokens) == [
        (0, 2), (3, 7), (8, 9), (9, 11), (12, 14), (14, 17), (18, 22), (22, 23), (24, 27), (28, 32), (32, 33),
    ]  # fmt: skip
    assert [token.text for token in tokenize(sentence)] == tokens
    assert [token.text for token in tokenize("You cannot see it's e-mail...")] == [
        "You", "can", "not", "see", "it", "'s", "e-mail", "...",
    ]  # fmt: skip
    with pytest.raises(TokensMisaligned, match="token 1 \\('walked'\\)"):
        align("He left.", ["He", "walked", "."])


def test_a_character_span_covers_every_token_it_touches() -> None:
    spans = [(0, 2), (3, 7), (8, 12)]
    assert token_span(spans, 3, 7) == (1, 2)
    assert token_span(spans, 1, 9) == (0, 3)
    assert token_span(spans, 2, 3) is None


SENTENCE = "It is a very big problem for us."


def test_an_answer_keeps_trimmed_spans_split_suggestions_and_types() -> None:
    value, data = clean_answer(
        {"targets": [{"start": 7, "end": 17, "suggestions": " huge ;enormous; Huge;", "type": 2}]},
        sentence=SENTENCE,
        min_targets=1,
    )
    assert value == MARKED
    assert data["targets"] == [
        {"start": 8, "end": 16, "text": "very big", "suggestions": ["huge", "enormous"], "type": DIVERSIFY_EXPRESSION}
    ]
    discarded = clean_answer('{"targets": [], "discard": " garbled "}', sentence=SENTENCE, min_targets=3)
    assert discarded == (DISCARDED, {"targets": [], "discard": "garbled"})


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"targets": []}, "Mark at least 1 targets"),
        ({"targets": [{"start": 8, "end": 16, "suggestions": " ; ", "type": 1}]}, "has no suggestion"),
        ({"targets": [{"start": 8, "end": 16, "suggestions": "huge", "type": "other"}]}, "choose its type"),
        ({"targets": [{"start": 0, "end": 99, "suggestions": "x", "type": 1}]}, "select a word or phrase"),
        ({"targets": [{"start": 13, "end": 16, "suggestions": "Big", "type": 1}]}, "is the target itself"),
        (
            {"targets": [{"start": 13, "end": 16, "suggestions": "x", "type": 1}] * 2},
            "The same words are marked twice",
        ),
        ("not json", "could not be read"),
    ],
)
def test_a_bad_answer_is_refused_saying_what_to_fix(answer: object, message: str) -> None:
    with pytest.raises(AnswerRefused, match=message):
        clean_answer(answer, sentence=SENTENCE, min_targets=1)


def test_the_merge_counts_votes_takes_the_majority_type_and_drops_targets_of_one_annotator() -> None:
    marked = [
        Marked(1, (3, 5), ("huge", "enormous"), DIVERSIFY_EXPRESSION),
        Marked(2, (3, 5), ("Huge",), DIVERSIFY_EXPRESSION),
        Marked(3, (3, 5), ("massive", "huge"), REFINE_USAGE),
        Marked(1, (0, 1), ("This",), REFINE_USAGE),
        Marked(2, (0, 1), ("That",), DIVERSIFY_EXPRESSION),
        Marked(3, (6, 7), ("we",), REFINE_USAGE),
    ]
    first, second = merge(marked, annotators=4)
    assert (first.span, first.suggestions, first.type, first.annotators) == (
        (0, 1),
        {"This": 1, "That": 1},
        REFINE_USAGE,
        2,
    )
    assert (second.span, second.suggestions, second.type) == (
        (3, 5),
        {"huge": 3, "enormous": 1, "massive": 1},
        DIVERSIFY_EXPRESSION,
    )
    assert (second.voting_index, second.as_release()) == (0.75, [[3, 5], {"huge": 3, "enormous": 1, "massive": 1}, 2])


def test_pa_det_and_pa_sug_are_mean_pairwise_jaccards() -> None:
    sentences: list[dict[int, dict[tuple[int, int], frozenset[str]]]] = [
        {
            1: {(0, 1): frozenset({"a", "b"}), (2, 3): frozenset({"c"})},
            2: {(0, 1): frozenset({"a"}), (4, 5): frozenset({"d"})},
        },
        {1: {}, 2: {}},  # neither marked anything: no pair to compare
        {1: {(0, 1): frozenset({"x"})}, 2: {(0, 1): frozenset({"x"})}, 3: {(0, 1): frozenset({"y"})}},
    ]
    found = pairwise_jaccard(sentences)
    # Targets: 1/3 for the first pair, 1 for each of the three pairs of the last sentence.
    assert found["pa_det"] == pytest.approx((1 / 3 + 1 + 1 + 1) / 4)
    # Suggestions on shared targets: 1/2, then 1, 0, 0.
    assert found["pa_sug"] == pytest.approx((0.5 + 1 + 0 + 0) / 4)
    assert (found["pairs"], found["shared_targets"]) == (4, 4)
