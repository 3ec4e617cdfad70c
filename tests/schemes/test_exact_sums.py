"""The exact sums kept beside figures kept per target (docs/design.md §7, "Incremental figures"): the
pipeline's progress (``schemes.progress.CountsSum``) and the evaluation's oracle
(``schemes.swords.evaluation.metrics.PartsSum``). Whatever targets a change takes out and adds back,
in whatever order, the kept sum equals the sum of the targets it holds computed whole."""

from __future__ import annotations

import math
import random

from schemes.progress import (
    TargetCount,
    counts_sum,
    counts_sum_less,
    counts_sum_total,
    counts_sums_combined,
    target_counts_summed,
)
from schemes.swords.evaluation import metrics
from schemes.swords.evaluation.metrics import TargetPart


def _target_count(rng: random.Random) -> TargetCount:
    """A target's share, some figures left out and some zero (a step reached with nothing collected)."""
    steps = rng.sample([1, 2, 3], rng.randint(0, 3))
    stages = rng.sample(["collecting", "accepted", "rejected", "excluded"], rng.randint(0, 3))
    return TargetCount(
        totals={step: tuple(rng.choice([0, 0, rng.randint(1, 9)]) for _ in range(4)) for step in steps},  # type: ignore[misc]
        candidate_stages={stage: rng.randint(0, 5) for stage in stages},
        table_cells={
            title: {name: (rng.randint(0, 1), rng.randint(0, 1)) for name in rng.sample(["a", "b", "c"], 2)}
            for title in rng.sample(["Sentences", "Experts"], rng.randint(0, 2))
        },
    )


def test_the_progress_sum_less_some_targets_equals_the_sum_of_the_others() -> None:
    rng = random.Random(7)
    for _ in range(200):
        targets = {number: _target_count(rng) for number in range(rng.randint(0, 12))}
        # Kept in buckets, combined, then the targets a change touched taken out and counted anew.
        buckets = [list(targets.values())[start : start + 3] for start in range(0, len(targets), 3)]
        total = counts_sums_combined(counts_sum(bucket) for bucket in buckets)
        assert counts_sum_total(total) == target_counts_summed(targets.values())
        changed = rng.sample(sorted(targets), rng.randint(0, len(targets)))
        total = counts_sum_less(total, [targets[number] for number in changed])
        for number in changed:
            if rng.random() < 0.3:
                del targets[number]  # no longer counted (a target no scheme counts any more)
            else:
                targets[number] = _target_count(rng)
        added = [targets[number] for number in changed if number in targets]
        total = counts_sums_combined([total, counts_sum(added)])
        assert counts_sum_total(total) == target_counts_summed(targets.values())


def test_the_progress_sum_left_unchanged_by_what_it_takes_out() -> None:
    rng = random.Random(3)
    targets = [_target_count(rng) for _ in range(6)]
    total = counts_sum(targets)
    before = counts_sum_total(total)
    counts_sum_less(total, targets[:3])
    assert counts_sum_total(total) == before, "the kept total is read again by others: not changed in place"


def _part(rng: random.Random, gap: float) -> TargetPart:
    counts = tuple((rng.randint(0, 10), 10, rng.randint(0, 10)) for _ in metrics.MODES_KINDS)
    return TargetPart(counts=counts, gap=gap, lenient_gap=gap)


def test_the_oracle_sum_less_some_targets_equals_the_sum_of_the_others_to_the_last_bit() -> None:
    rng = random.Random(11)
    for _ in range(200):
        # GAPs of any float: their float sum depends on the order, their exact sum does not.
        parts = {number: _part(rng, rng.choice([-1.0, rng.random()])) for number in range(rng.randint(0, 20))}
        buckets = [list(parts.values())[start : start + 4] for start in range(0, len(parts), 4)]
        total = metrics.sums_combined(metrics.parts_summed(bucket) for bucket in buckets)
        changed = rng.sample(sorted(parts), rng.randint(0, len(parts)))
        total = metrics.sum_less(total, [parts[number] for number in changed])
        for number in changed:
            if rng.random() < 0.3:
                del parts[number]
            else:
                parts[number] = _part(rng, rng.random() * 10 ** rng.randint(-20, 3))
        total = metrics.sums_combined([total, metrics.parts_summed(parts[n] for n in changed if n in parts)])
        assert total == metrics.parts_summed(reversed(list(parts.values())))
        figures = metrics.figures_of_sum(total)
        gaps = [part.gap for part in parts.values()]
        assert figures.gap == (100 * math.fsum(gaps) / len(gaps) if gaps else 0.0)
        assert figures.targets_evaluated == len(parts)
        whole = metrics.figures_of_parts(parts.values()).as_dict()
        assert {name: value for name, value in figures.as_dict().items() if name != "gap"} == {
            name: value for name, value in whole.items() if name != "gap"
        }


def test_the_oracle_figures_of_the_exact_sum_are_those_of_the_float_sum_when_the_gaps_are_whole() -> None:
    rng = random.Random(5)
    for size in (0, 1, 2, 7, 100, 7620):
        parts = [_part(rng, rng.choice([-1.0, 1.0])) for _ in range(size)]
        assert metrics.figures_of_sum(metrics.parts_summed(parts)) == metrics.figures_of_parts(parts)
