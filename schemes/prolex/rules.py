"""ProLex's pure rules: what its labels decide, and the quadruplets it outputs (Zhang et al. 2024).

A substitute judged by one or two experts is acceptable when its 1s outnumber its -1s and
unacceptable when its -1s outnumber its 1s; 0 (uncertain) decides nothing, and neither does a tie.
The output of a target is a quadruplet: target, sentence, acceptable substitutes, and the
proficiency-oriented ones among them (``levels.proficiency_oriented``); a target with no acceptable
substitute is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass

from schemes.prolex.formats import MARK, ProlexRow
from schemes.prolex.levels import Level, proficiency_oriented, to_file

ACCEPTABLE = "acceptable"
UNACCEPTABLE = "unacceptable"
# The stored answers: ProLex's 1 / -1 / 0, and the label each becomes.
ONE, MINUS_ONE, ZERO = "1", "-1", "0"
LABEL_OF_ANSWER = {ONE: "accept", MINUS_ONE: "reject", ZERO: "abstain"}


def decision(*, ones: int, minus_ones: int) -> str | None:
    """``ACCEPTABLE``, ``UNACCEPTABLE`` or None (no label, only 0s, or a tie)."""
    if ones > minus_ones:
        return ACCEPTABLE
    if minus_ones > ones:
        return UNACCEPTABLE
    return None


def marked_sentence(text: str, word: str) -> str:
    """The sentence as ProLex writes it: every occurrence of the target wrapped in ``**``, even
    inside a longer word."""
    return text.replace(word, f"{MARK}{word}{MARK}")


@dataclass(frozen=True)
class Judged:
    """A substitute of a target with its labels counted and its level."""

    text: str
    ones: int
    minus_ones: int
    level: Level


def quadruplet(*, target: str, text: str, target_level: Level, substitutes: Sequence[Judged]) -> ProlexRow | None:
    """The quadruplet of a collected target as a ProLex row (with its unacceptable substitutes and
    the levels of the proficiency lists), or None when no substitute is acceptable."""
    acceptable = [s for s in substitutes if decision(ones=s.ones, minus_ones=s.minus_ones) == ACCEPTABLE]
    if not acceptable:
        return None
    kept = [s for s in acceptable if proficiency_oriented(substitute=s.level, target=target_level)]
    others = [s for s in acceptable if s not in kept]
    return ProlexRow(
        target=target,
        sentence=marked_sentence(text, target),
        acc_subs=[s.text for s in acceptable],
        unacc_subs=[s.text for s in substitutes if decision(ones=s.ones, minus_ones=s.minus_ones) == UNACCEPTABLE],
        prof_acc_subs=[s.text for s in kept],
        prof_unacc_subs=[s.text for s in others],
        t_words_cefr=to_file(target_level),
        prof_acc_cefr=[to_file(s.level) for s in kept],
        prof_unacc_cefr=[to_file(s.level) for s in others],
    )


def judges_needed(experts: int) -> int:
    """Judgments a substitute needs: one from each expert its target goes to, one at least (a target
    with imported labels and no expert named)."""
    return max(1, experts)


def expert_counts(
    *,
    expert: int,
    targets: Iterable[int],
    substitutes: Mapping[int, Sequence[int]],
    judged_by: Mapping[int, Set[int]],
) -> tuple[int, int]:
    """(judged, to judge) of one expert: of the substitutes of the expert's ``targets`` (``substitutes``:
    target -> substitute ids), those the expert gave a valid label (``judged_by``: substitute -> the
    workers who did) and the rest."""
    judged = to_judge = 0
    for target_id in targets:
        for substitute in substitutes.get(target_id, ()):
            if expert in judged_by.get(substitute, frozenset()):
                judged += 1
            else:
                to_judge += 1
    return judged, to_judge
