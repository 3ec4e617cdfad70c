"""The generation task's pure rules (CoInCo style): checking proposals, lemmatising them, merging them.

An annotator proposes up to five substitutes for a target in its context, from memory, or says
that none comes to mind. Proposals are lemmatised with ``lemminflect`` by the target's part of
speech (a phrase by its head: the first word of a verb phrase, the last of a noun phrase), and
merged across annotators into lemma -> votes (the annotators who proposed it, spelled as first
proposed).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lemminflect import getLemma

from schemes.base import AnswerRefused, answer_object

MAX_PROPOSALS = 5
MAX_PROPOSAL_LENGTH = 100
# The source of the candidates proposals become (Candidate.sources).
SOURCE = "crowd"
PROPOSED, NONE = "proposed", "none"
_UPOS = {"noun": "NOUN", "verb": "VERB", "adj": "ADJ", "adv": "ADV"}


def lemma(text: str, pos: str) -> str:
    """The proposal's lemma for a target of part of speech ``pos`` (noun, verb, adj, adv; "" keeps it)."""
    words = text.split()
    upos = _UPOS.get(pos)
    if upos is None or not words:
        return " ".join(words)
    head = len(words) - 1 if upos == "NOUN" else 0
    words[head] = getLemma(words[head].lower(), upos=upos)[0]
    return " ".join(words)


def clean_proposals(raw: Any, *, target: str, pos: str) -> tuple[str, dict[str, Any]]:
    """(``PROPOSED`` or ``NONE``, the answer's data: substitutes as typed, their lemmas, and none),
    from ``{"substitutes": [...], "none": false}`` or its JSON."""
    raw = answer_object(raw, what="your substitutes, or say that none comes to mind")
    given = raw.get("substitutes") or []
    none = raw.get("none") is True
    if not isinstance(given, list) or not all(isinstance(item, str) for item in given):
        raise AnswerRefused("The substitutes must be a list of words or phrases.")
    substitutes: dict[str, str] = {}
    for text in (" ".join(item.split()) for item in given):
        if text:
            substitutes.setdefault(text.casefold(), text)
    if none and substitutes:
        raise AnswerRefused("You typed substitutes and said that none comes to mind: keep one of the two.")
    if not none and not substitutes:
        raise AnswerRefused("Type at least one substitute, or tick that none comes to mind.")
    if len(substitutes) > MAX_PROPOSALS:
        raise AnswerRefused(f"Propose at most {MAX_PROPOSALS} substitutes.")
    for text in substitutes.values():
        if len(text) > MAX_PROPOSAL_LENGTH:
            raise AnswerRefused(f"A substitute is longer than {MAX_PROPOSAL_LENGTH} characters.")
        if text.casefold() == target.casefold():
            raise AnswerRefused(f"“{text}” is the word itself; propose other words.")
    lemmas = list(dict.fromkeys(lemma(text, pos) for text in substitutes.values()))
    return (NONE if none else PROPOSED), {"substitutes": list(substitutes.values()), "lemmas": lemmas, "none": none}


@dataclass(frozen=True)
class Proposals:
    """A target's proposals merged: lemma -> votes, most voted first; who proposed, who had none."""

    votes: dict[str, int]
    proposers: int
    none: int


def merge_proposals(answers: Sequence[tuple[int, Sequence[str], bool]]) -> Proposals:
    """(annotator, lemmas, none) per answer; an annotator's lemma counts once (compared without case)."""
    votes: Counter[str] = Counter()
    spelling: dict[str, str] = {}
    annotators: set[int] = set()
    without: set[int] = set()
    for annotator, lemmas, none in answers:
        annotators.add(annotator)
        if none:
            without.add(annotator)
        for text in dict.fromkeys(item.casefold() for item in lemmas):
            votes[text] += 1
        for text in lemmas:
            spelling.setdefault(text.casefold(), text)
    order = list(votes)
    ranked = sorted(order, key=lambda key: (-votes[key], order.index(key)))
    return Proposals(votes={spelling[key]: votes[key] for key in ranked}, proposers=len(annotators), none=len(without))
