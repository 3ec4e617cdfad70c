"""CEFR levels as ProLex writes them, and its proficiency rule (Zhang et al. 2024).

ProLex numbers levels 0 to 5 for A1 to C2, 6 for a word no list knows, and writes the string
``'None'`` for a phrase (a phrase has no level); -1 also occurs in its files. A level comes, first
to last, from the researcher (``Target.cefr`` / ``Candidate.cefr``, A1 to C2), from an imported
file (kept as imported, never recomputed), or from the offline estimates of ``cefrpy`` (the
CEFR-J list and its extensions).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cefrpy import CEFRAnalyzer

CEFR_LEVELS = ("A1", "A2", "B1", "B2", "C1", "C2")
UNKNOWN = 6
# How ProLex files write the level of a phrase.
PHRASE = "None"

Level = int | None


def level_code(cefr: str) -> int:
    """0 to 5 for A1 to C2."""
    return CEFR_LEVELS.index(cefr.strip().upper())


def from_file(raw: Any) -> Level:
    """A level as a ProLex file writes it: an integer, or ``'None'`` for a phrase."""
    return None if raw is None or raw == PHRASE else int(raw)


def to_file(level: Level) -> int | str:
    return PHRASE if level is None else level


@cache
def _analyzer() -> CEFRAnalyzer:
    # Imported here: cefrpy reads its word lists at import (half a second every process paid).
    from cefrpy import CEFRAnalyzer

    return CEFRAnalyzer()


def estimated_level(text: str) -> Level:
    """``cefrpy``'s level of a word (its average over parts of speech), ``UNKNOWN`` for a word it
    does not list, and no level for a phrase."""
    word = text.strip()
    if not word or any(char.isspace() for char in word):
        return None
    found = _analyzer().get_average_word_level_CEFR(word.lower())
    return level_code(str(found)) if found is not None else UNKNOWN


def effective_level(*, text: str, cefr: str = "", imported: Any = None, has_imported: bool = False) -> Level:
    """The level a rule uses: the researcher's (``cefr``), else the imported one, else the estimate."""
    if cefr:
        return level_code(cefr)
    if has_imported:
        return from_file(imported)
    return estimated_level(text)


def proficiency_oriented(*, substitute: Level, target: Level) -> bool:
    """A substitute is proficiency-oriented when its level is at least the target's; a phrase
    (no level) is kept, and so is every substitute of a target without a level."""
    return substitute is None or target is None or substitute >= target
