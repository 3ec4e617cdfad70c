"""A scheme's collection steps (``schemes.base.AnnotationScheme.steps``), which the review's progress
(``schemes.progress``) counts too."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    """One collection step of a scheme: its number (``Batch.step``), a short name and a title;
    ``scheme`` names another scheme that runs the step (its items, page, answers and settings),
    e.g. SWORDS's step 1 is run by the generation scheme (``schemes.get_scheme(..., step=...)``)."""

    number: int
    name: str
    title: str
    scheme: str = ""


def main_step(steps: Sequence[Step]) -> int:
    """The first step a scheme runs itself: what a benchmark's first batch collects by default."""
    return next(step.number for step in steps if not step.scheme)
