"""The layout of a target's HITs, as pure functions over plain values (docs/design.md §3, SWORDS App. B.2).

Nothing here touches the database: the scheme's planner (``schemes.swords.SwordsScheme.planner``)
loads what it needs, and ``hits.services.generation`` writes the planned HITs in bulk.

Randomness is one numpy Generator per target (``schemes.planning.target_rng``, seeded from the
batch seed, the step and the target's content, never from database ids).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence

import numpy as np

from annotation.models import normalize_candidate
from schemes.base import CandidateRef, PlannedHIT, PlannedItem
from schemes.swords.items import ItemKind
from schemes.swords.settings import MAX_CANDIDATES_PER_HIT


def hit_count(n: int, *, per_hit: int) -> int:
    """k = ceil(n / candidates_per_hit)."""
    return math.ceil(n / per_hit)


def split_into_parts(n: int, *, per_hit: int, rng: np.random.Generator) -> list[list[int]]:
    """Shuffle indices 0..n-1 and `numpy.array_split` them into k = ceil(n / per_hit) parts.

    array_split gives the first n mod k parts one more element, so sizes differ by at most one
    and none exceeds per_hit.
    """
    if not 1 <= per_hit <= MAX_CANDIDATES_PER_HIT:
        raise ValueError(f"candidates per HIT must be 1 to {MAX_CANDIDATES_PER_HIT}, got {per_hit}")
    if n == 0:
        return []
    order = rng.permutation(n).tolist()
    count = hit_count(n, per_hit=per_hit)
    # numpy.array_split's parts, cut from the list (the same parts without an array for each):
    # the first n mod k hold one more.
    size, longer = divmod(n, count)
    starts = [i * size + min(i, longer) for i in range(count + 1)]
    return [order[starts[i] : starts[i + 1]] for i in range(count)]


def plan_target_hits(
    *,
    target_word: str,
    candidates: Sequence[CandidateRef],
    per_hit: int,
    rng: np.random.Generator,
    pick_distractor: Callable[[np.random.Generator], str],
) -> list[PlannedHIT]:
    """The HITs of one target: candidate parts plus their controls, in a seeded display order.

    A HIT collects one number of assignments for all its candidates, so the candidates are first
    grouped by the assignments they need (most first; fresh candidates all need the step's full
    number, one group) and each group is split on its own; parts are numbered across groups.

    Each HIT adds the target-copy control and a distractor. A candidate equal to the target word
    (after normalisation) would show the word twice, once as a control expecting accept and once
    as a candidate to judge: its HIT shows it once, as the candidate, and keeps only the distractor
    as its control.

    The generator is consumed in a fixed order (per group: split, then per part: distractor,
    display order), so the same generator state always gives the same HITs.
    """
    target_as_candidate = normalize_candidate(target_word)
    groups: dict[int, list[CandidateRef]] = defaultdict(list)
    for candidate in candidates:
        groups[candidate.assignments].append(candidate)
    # Items are immutable: one target copy serves every HIT of the target.
    target_copy = PlannedItem(ItemKind.CONTROL_TARGET, target_word, control=True)
    hits: list[PlannedHIT] = []
    for assignments in sorted(groups, reverse=True):
        ordered = sorted(groups[assignments], key=lambda candidate: (candidate.key, candidate.id))
        rows = [PlannedItem(ItemKind.CANDIDATE, candidate.text, candidate.id) for candidate in ordered]
        is_target = [candidate.key == target_as_candidate for candidate in ordered]
        for indices in split_into_parts(len(ordered), per_hit=per_hit, rng=rng):
            items = [rows[i] for i in indices]
            if not any(is_target[i] for i in indices):
                items.append(target_copy)
            items.append(PlannedItem(ItemKind.CONTROL_DISTRACTOR, pick_distractor(rng), control=True))
            display = rng.permutation(len(items)).tolist()
            hits.append(PlannedHIT(part=len(hits), assignments=assignments, items=tuple([items[i] for i in display])))
    return hits
