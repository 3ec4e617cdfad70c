"""The benchmark's counts and highest ids kept by difference (``annotation.selectors.counts_replaced``,
docs/design.md §7, "Incremental figures"): whatever targets a change counts again, with rows added or
deleted, the kept total equals ``counts_summed`` of the targets' counts then, or is not known (None)
exactly when the targets counted again held a highest id and no longer reach it."""

from __future__ import annotations

import random

from annotation.selectors import counts_replaced, counts_summed

Counts = tuple[int, int, int, int]


class Rows:
    """A benchmark's candidates and labels by target, with ids given in order as a database would."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.next_id = 1
        self.candidates: dict[int, list[int]] = {}
        self.labels: dict[int, list[int]] = {}

    def new_id(self) -> int:
        self.next_id += self.rng.randint(1, 3)
        return self.next_id

    def add(self, target: int) -> None:
        candidates = self.candidates.setdefault(target, [])
        if not candidates or self.rng.random() < 0.3:
            candidates.append(self.new_id())
        for _ in range(self.rng.randint(0, 3)):
            self.labels.setdefault(target, []).append(self.new_id())

    def delete(self, target: int) -> None:
        labels = self.labels.get(target, [])
        if labels and self.rng.random() < 0.7:
            # The highest, most often: the delete that lowers a highest id.
            labels.remove(max(labels) if self.rng.random() < 0.6 else self.rng.choice(labels))
        elif not labels and target in self.candidates:
            candidates = self.candidates[target]
            candidates.remove(max(candidates) if self.rng.random() < 0.6 else self.rng.choice(candidates))
            if not candidates:
                del self.candidates[target]

    def counts(self) -> dict[int, Counts]:
        """Per target with any candidate, as ``_target_counts`` gives them."""
        return {
            target: (
                len(candidates),
                len(self.labels.get(target, [])),
                max(candidates),
                max(self.labels.get(target) or [0]),
            )
            for target, candidates in self.candidates.items()
        }


def test_the_counts_replaced_equal_the_counts_summed_or_are_not_known_when_a_highest_id_went() -> None:
    rng = random.Random(5)
    rows = Rows(rng)
    for target in range(8):
        rows.add(target)
    total = counts_summed(rows.counts().values())
    unknown = kept = 0
    for _ in range(3000):
        before = rows.counts()
        changed = rng.sample(range(12), rng.randint(1, 3))
        for target in changed:
            (rows.add if rng.random() < 0.6 else rows.delete)(target)
        after = rows.counts()
        replaced = counts_replaced(
            total,
            [before[target] for target in changed if target in before],
            [after[target] for target in changed if target in after],
        )
        fresh = counts_summed(after.values())
        # Ids are unique: a highest id that went is one no target holds, so the highest falls.
        if fresh[2] < total[2] or fresh[3] < total[3]:
            assert replaced is None
            unknown += 1
            total = fresh  # every target counted again
        else:
            assert replaced == fresh
            kept += 1
            total = replaced
    assert unknown > 20, "deletes took out a highest id"
    assert kept > 1000
    assert total == counts_summed(rows.counts().values())
