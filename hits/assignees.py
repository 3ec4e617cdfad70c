"""Work assigned to named annotators (ProLex's experts): which annotators each target goes to.

A pure rule, scheme-blind: the targets are shuffled with the seed, the first ``overlap`` of them
go to two annotators each (the doubly annotated subset that agreement is measured on) and the
rest to one. Each target goes to the least loaded annotators (in the order given among equals),
so loads differ by one target at most, and the same seed gives the same assignment.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class AssigneesError(ValueError):
    """The annotators cannot be given the targets as asked; the message says why."""


def assignees_plan(
    *, target_ids: Sequence[int], worker_ids: Sequence[int], overlap: int, seed: int
) -> dict[int, tuple[int, ...]]:
    """Target id -> the workers it goes to (two for the ``overlap`` targets, one for the rest)."""
    workers = list(dict.fromkeys(worker_ids))
    if not workers:
        raise AssigneesError("name at least one annotator")
    if len(workers) < len(worker_ids):
        raise AssigneesError("an annotator is named twice")
    if overlap < 0:
        raise AssigneesError(f"the overlap must not be negative, got {overlap}")
    if overlap and len(workers) < 2:
        raise AssigneesError("an overlap needs two annotators at least")
    if overlap > len(target_ids):
        raise AssigneesError(f"the overlap ({overlap}) is larger than the {len(target_ids)} targets to assign")
    ordered = sorted(target_ids)
    shuffled = [ordered[index] for index in np.random.default_rng(seed).permutation(len(ordered))]
    turn = {worker: index for index, worker in enumerate(workers)}
    load = dict.fromkeys(workers, 0)
    plan: dict[int, tuple[int, ...]] = {}
    for index, target_id in enumerate(shuffled):
        # The least loaded annotators, in the order given among equals.
        chosen = sorted(workers, key=lambda worker: (load[worker], turn[worker]))[: 2 if index < overlap else 1]
        for worker in chosen:
            load[worker] += 1
        plan[target_id] = tuple(sorted(chosen, key=turn.__getitem__))
    return plan
