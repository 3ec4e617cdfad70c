"""What an annotator's answer to a TSAR instance is, and its checks (docs/design.md §12).

The page posts (and the work API takes) one answer per instance, as JSON or an object::

    {"substitute": "tradicional", "none": false}

``substitute`` is one simpler word or short phrase for the complex word, in the sentence's
language; ``none`` says that no simpler word comes to mind. The checks hold in any language: the
text is trimmed and its inner spaces collapsed; it must hold a letter and only letters, marks,
digits, spaces and the joiners of words (hyphen, apostrophe, period); it must not be the complex
word itself (compared without case); it is at most ``max_length`` characters.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from schemes.base import AnswerRefused, answer_object

SUGGESTED, NONE = "suggested", "none"
# Characters that join the parts of a word or phrase ("well-known", "l'eau", "Sr."), beside spaces.
JOINERS = frozenset("-'\u2019.")


def word_problem(text: str) -> str | None:
    """Why ``text`` is not a word or phrase, or None when it is one."""
    if not any(char.isalpha() for char in text):
        return "holds no letter"
    for char in text:
        if char in JOINERS or char == " ":
            continue
        if unicodedata.category(char)[0] not in "LMN":
            return f"holds “{char}”, which is not part of a word"
    return None


def clean_suggestion(raw: Any, *, complex_word: str, max_length: int) -> tuple[str, dict[str, Any]]:
    """(``SUGGESTED`` or ``NONE``, the answer's data: the substitute as typed, spaces collapsed, and
    none) from ``{"substitute": ..., "none": ...}`` or its JSON; ``AnswerRefused`` says what to fix."""
    raw = answer_object(raw, what="a simpler word, or say that none comes to mind")
    given = raw.get("substitute")
    if given is None:
        given = ""
    if not isinstance(given, str):
        raise AnswerRefused("The simpler word must be text.")
    none = raw.get("none") is True
    text = " ".join(given.split())
    if none and text:
        raise AnswerRefused("You typed a word and ticked that no simpler word comes to mind: keep one of the two.")
    if none:
        return NONE, {"substitute": "", "none": True}
    if not text:
        raise AnswerRefused("Type one simpler word, or tick that no simpler word comes to mind.")
    if len(text) > max_length:
        raise AnswerRefused(f"The simpler word is longer than {max_length} characters.")
    problem = word_problem(text)
    if problem is not None:
        raise AnswerRefused(f"“{text}” {problem}: type a word.")
    if text.casefold() == complex_word.strip().casefold():
        raise AnswerRefused(f"“{text}” is the highlighted word itself: type a simpler one.")
    return SUGGESTED, {"substitute": text, "none": False}
