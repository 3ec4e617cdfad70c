"""What the Smart Word Suggestions templates show of a sentence: its tokens and the spaces between
(the page), and the targets of an answer drawn on it (the answer researchers read). The page
declares both as helpers (``schemes.base.Page.helpers``)."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from schemes.sws.tokens import tokenize


def sentence_pieces(sentence: str) -> list[dict[str, Any]]:
    """The sentence as tokens (``index``, ``start``, ``end``, ``text``) and the text between them
    (``index`` None), in order: the page renders every character of the sentence once."""
    pieces: list[dict[str, Any]] = []
    cursor = 0
    for index, token in enumerate(tokenize(sentence)):
        if token.start > cursor:
            pieces.append({"index": None, "text": sentence[cursor : token.start]})
        text = sentence[token.start : token.end]
        pieces.append({"index": index, "start": token.start, "end": token.end, "text": text})
        cursor = token.end
    if cursor < len(sentence):
        pieces.append({"index": None, "text": sentence[cursor:]})
    return pieces


def marked_pieces(sentence: str, data: Any) -> list[dict[str, Any]]:
    """The sentence cut where an answer's targets (``Answer.data["targets"]``) start and end: each
    piece's ``text`` and the ``numbers`` (from 1, in the answer's order) of the targets covering it,
    empty between them. Overlapping targets each keep their number; every character shows once."""
    targets = data.get("targets") if isinstance(data, dict) else None
    spans = [
        (number, target["start"], target["end"])
        for number, target in enumerate(targets or [], start=1)
        if isinstance(target, dict) and isinstance(target.get("start"), int) and isinstance(target.get("end"), int)
    ]
    cuts = sorted(
        {0, len(sentence)} | {max(0, min(len(sentence), edge)) for _, start, end in spans for edge in (start, end)}
    )
    pieces: list[dict[str, Any]] = []
    for start, end in pairwise(cuts):
        numbers = [number for number, first, last in spans if first <= start and end <= last]
        pieces.append({"text": sentence[start:end], "numbers": numbers})
    return pieces
