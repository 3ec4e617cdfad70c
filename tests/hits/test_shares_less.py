"""The batches' shares summed by difference (``hits.selectors.shares.shares_less``, docs/design.md §7,
"Incremental figures"): whatever targets a change takes out and adds back, the kept sum equals
``shares_summed`` of the shares it holds, down to the batches and entries no target holds any more."""

from __future__ import annotations

import random

from hits.selectors.shares import BatchShare, shares_less, shares_summed


def _share(rng: random.Random, step: int) -> BatchShare:
    """A target's share of a batch: at least one HIT, of each size and status it names at least one."""
    sizes = tuple((size, rng.randint(1, 3)) for size in sorted(rng.sample([1, 3, 5], rng.randint(1, 2))))
    valid_sizes = tuple((size, rng.randint(1, 4)) for size, _ in sizes if rng.random() < 0.5)
    statuses = tuple((status, rng.randint(1, 4)) for status in sorted(rng.sample(["approved", "submitted"], 1)))
    budget = tuple((size, free) for size, _ in sizes if (free := rng.choice([0, 2, 5])))
    hits = sum(count for _, count in sizes)
    return BatchShare(
        step=step,
        hits=hits,
        required=sum(size * count for size, count in sizes),
        sizes=sizes,
        valid=sum(count for _, count in valid_sizes),
        valid_sizes=valid_sizes,
        filtered=rng.randint(0, 2),
        complete=rng.randint(0, hits),
        free=rng.randint(0, 9),
        statuses=statuses,
        budget_sizes=budget,
    )


def _target(rng: random.Random) -> dict[int, BatchShare]:
    return {batch_id: _share(rng, step) for batch_id, step in rng.sample([(1, 2), (2, 2), (3, 3)], rng.randint(1, 3))}


def test_the_shares_less_some_targets_equal_the_shares_of_the_others() -> None:
    rng = random.Random(13)
    vanished = 0
    for _ in range(300):
        targets = {number: _target(rng) for number in range(rng.randint(0, 8))}
        total = shares_summed(shares_summed(list(targets.values())[start : start + 3]) for start in range(0, 8, 3))
        assert total == shares_summed(targets.values())
        changed = rng.sample(sorted(targets), rng.randint(0, len(targets)))
        less = shares_less(total, [targets[number] for number in changed])
        assert total == shares_summed(targets.values()), "the kept total is read by others: not changed in place"
        for number in changed:
            if rng.random() < 0.4:
                del targets[number]
            else:
                targets[number] = _target(rng)
        kept = shares_summed([less, *(targets[number] for number in changed if number in targets)])
        fresh = shares_summed(targets.values())
        assert kept == fresh
        vanished += len(set(total) - set(fresh))
    assert vanished, "some batches lost every target's share"
