"""Template filters of the Smart Word Suggestions page: the sentence cut into tokens and the spaces between."""

from __future__ import annotations

from typing import Any

from django import template

from schemes.sws.tokens import tokenize

register = template.Library()


@register.filter
def sws_pieces(sentence: str) -> list[dict[str, Any]]:
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
