"""Template filters of the read-only answers researchers see (``schemes.base.Page.answers_template``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from django import template

from schemes.base import Choice

register = template.Library()

# The badge of an answer by its place among the scheme's choices: the first reads as yes, the second as no.
_TONES = ("ok", "bad")


class ShownChoice(NamedTuple):
    label: str
    tone: str


@register.filter
def shown_choice(value: str, choices: Sequence[Choice]) -> ShownChoice:
    """An answer in the scheme's words (its choice's label) with its badge's tone; a value that is
    none of the choices shows as stored, without a tone."""
    for index, choice in enumerate(choices):
        if choice.value == value:
            return ShownChoice(choice.label, _TONES[index] if index < len(_TONES) else "")
    return ShownChoice(value, "")
