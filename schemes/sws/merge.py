"""Smart Word Suggestions' merge of several annotators' work on a sentence (Wang et al. 2023).

Each annotator marks targets (token spans) and gives each one or more suggestions and a type,
refine-usage or diversify-expression. Across annotators a target becomes {suggestion: votes}
(votes: the annotators who gave it, spelled as its first annotator did) with the type most of its
annotators chose (refine-usage on a tie); a target marked by only one annotator is dropped. Its
voting index is the share of the sentence's annotators who marked it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

REFINE_USAGE = "refine-usage"
DIVERSIFY_EXPRESSION = "diversify-expression"
# The released files write the type as a number.
TYPE_CODES = {REFINE_USAGE: 1, DIVERSIFY_EXPRESSION: 2}
TYPE_NAMES = {code: name for name, code in TYPE_CODES.items()}
# A target kept in the merge was marked by at least this many annotators.
MIN_ANNOTATORS = 2

Span = tuple[int, int]


@dataclass(frozen=True)
class Marked:
    """One annotator's target: its token span, suggestions and type."""

    annotator: int
    span: Span
    suggestions: tuple[str, ...]
    type: str


@dataclass(frozen=True)
class MergedTarget:
    span: Span
    suggestions: dict[str, int]
    type: str
    annotators: int
    voting_index: float

    def as_release(self) -> list[object]:
        """The target as the released files write it: [[start, end], {suggestion: votes}, type]."""
        return [list(self.span), dict(self.suggestions), TYPE_CODES[self.type]]


def merge(marked: Sequence[Marked], *, annotators: int, min_annotators: int = MIN_ANNOTATORS) -> list[MergedTarget]:
    """The sentence's targets merged across its ``annotators``, by span; suggestions most voted
    first (then in the order they were first given). An annotator counts once per target and
    once per suggestion (suggestions compared without case)."""
    by_span: dict[Span, dict[int, Marked]] = defaultdict(dict)
    for target in marked:
        by_span[target.span].setdefault(target.annotator, target)
    merged = []
    for span in sorted(by_span):
        marks = list(by_span[span].values())
        if len(marks) < min_annotators:
            continue
        votes: Counter[str] = Counter()
        spelling: dict[str, str] = {}
        for mark in marks:
            for suggestion in dict.fromkeys(s.strip().casefold() for s in mark.suggestions if s.strip()):
                votes[suggestion] += 1
            for suggestion in mark.suggestions:
                spelling.setdefault(suggestion.strip().casefold(), suggestion.strip())
        order = list(votes)
        ranked = sorted(order, key=lambda key: (-votes[key], order.index(key)))
        types = Counter(mark.type for mark in marks)
        majority = REFINE_USAGE if types[REFINE_USAGE] >= types[DIVERSIFY_EXPRESSION] else DIVERSIFY_EXPRESSION
        merged.append(
            MergedTarget(
                span=span,
                suggestions={spelling[key]: votes[key] for key in ranked},
                type=majority,
                annotators=len(marks),
                voting_index=len(marks) / annotators if annotators else 0.0,
            )
        )
    return merged
