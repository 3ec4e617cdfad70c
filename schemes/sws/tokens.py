"""Tokens of a sentence and where each sits in it (Smart Word Suggestions counts spans in tokens).

The released files give each sentence's tokens (``sentence_split``), Penn-Treebank style: quotes as
``` `` ``` and ``''``, ``do n't``, ``it 's``. :func:`align` finds them in the sentence; for a
sentence without tokens, :func:`tokenize` makes them the same way. Spans on the annotator's page
are character offsets, turned into token spans with :func:`token_span`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

# How a Penn-Treebank token may be written in the sentence it came from.
_SPELLINGS = {"``": ('"', "``", "\u201c"), "''": ('"', "''", "\u201d"), "-LRB-": ("(",), "-RRB-": (")",)}
# "can" of "cannot" and a word before "n't" (PTB writes "can not", "do n't", "ca n't"), "n't" and
# the other clitics, words with inner hyphens, numbers, an ellipsis or a double dash, and any other
# character alone.
_TOKEN = re.compile(
    r"\b(?i:can)(?=(?i:not)\b)|\w+?(?=(?i:n't)\b)|(?i:n't)\b|'(?i:s|re|ve|ll|d|m)\b|\w+(?:-\w+)*|\.\.\.|--|\S"
)


class Token(NamedTuple):
    text: str
    start: int
    end: int


class TokensMisaligned(ValueError):
    """A token that cannot be found where it should be in the sentence."""

    def __init__(self, index: int, token: str) -> None:
        super().__init__(f"token {index} ({token!r}) is not found in the sentence after the token before it")
        self.index = index


def align(sentence: str, tokens: Sequence[str]) -> list[tuple[int, int]]:
    """Where each token sits in the sentence, in order, skipping spaces (U+00A0 included)."""
    spans: list[tuple[int, int]] = []
    cursor = 0
    for index, token in enumerate(tokens):
        while cursor < len(sentence) and sentence[cursor].isspace():
            cursor += 1
        for spelling in (*_SPELLINGS.get(token, ()), token):
            if spelling and sentence.startswith(spelling, cursor):
                spans.append((cursor, cursor + len(spelling)))
                cursor += len(spelling)
                break
        else:
            raise TokensMisaligned(index, token)
    return spans


def tokenize(sentence: str) -> list[Token]:
    """Penn-Treebank-like tokens of a sentence, with their character offsets."""
    tokens = []
    for match in _TOKEN.finditer(sentence):
        text = match.group()
        if text == '"':
            # An opening quote follows a space or starts the sentence; a closing one does not.
            opening = match.start() == 0 or sentence[match.start() - 1].isspace()
            text = "``" if opening else "''"
        tokens.append(Token(text, match.start(), match.end()))
    return tokens


def token_span(spans: Sequence[tuple[int, int]], start: int, end: int) -> tuple[int, int] | None:
    """The end-exclusive token span covering characters ``start:end`` (every token they touch), or
    None when they touch no token."""
    touched = [index for index, (first, last) in enumerate(spans) if first < end and start < last]
    return (touched[0], touched[-1] + 1) if touched else None
