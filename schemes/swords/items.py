"""The rows of a SWORDS HIT and the answers to them (docs/design.md §3, §4; SWORDS App. B)."""

from __future__ import annotations

from django.db import models


class ItemKind(models.TextChoices):
    CANDIDATE = "candidate", "candidate"
    CONTROL_TARGET = "control_target", "control: the target itself"
    CONTROL_DISTRACTOR = "control_distractor", "control: a random word"


CONTROL_KINDS = frozenset({ItemKind.CONTROL_TARGET, ItemKind.CONTROL_DISTRACTOR})

ACCEPT = "accept"
REJECT = "reject"
ABSTAIN = "abstain"


def control_answer_correct(kind: str, value: str) -> bool:
    """The target copy must be accepted; the distractor must not be (reject and abstain both pass)."""
    if kind == ItemKind.CONTROL_TARGET:
        return value == ACCEPT
    if kind == ItemKind.CONTROL_DISTRACTOR:
        return value != ACCEPT
    raise ValueError(f"{kind!r} is not a control kind")


def expected_control_answer(kind: str) -> str:
    """What a control expects, in words for a researcher's evidence table."""
    return "accept" if kind == ItemKind.CONTROL_TARGET else "reject or abstain"
