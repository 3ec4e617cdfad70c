"""The pure layout of a target's HITs: partition and controls, without a database."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemes.planning import target_key, target_rng
from schemes.swords.items import ItemKind
from schemes.swords.planning import (
    CandidateRef,
    PlannedHIT,
    hit_count,
    plan_target_hits,
    split_into_parts,
)

seeds = st.integers(min_value=-(2**63), max_value=2**63 - 1)
sizes = st.integers(min_value=0, max_value=250)
per_hits = st.integers(min_value=1, max_value=10)


def candidates(n: int, *, assignments: int = 3, first_id: int = 100) -> list[CandidateRef]:
    return [
        CandidateRef(id=first_id + i, text=f"word{i}", key=f"word{first_id + i:03d}", assignments=assignments)
        for i in range(n)
    ]


def plan(
    n: int, seed: int, *, per_hit: int = 10, word: str = "bright", refs: list[CandidateRef] | None = None
) -> list[PlannedHIT]:
    return plan_target_hits(
        target_word=word,
        candidates=candidates(n) if refs is None else refs,
        per_hit=per_hit,
        rng=target_rng(seed=seed, step=2, key=target_key(context_digest="d", offset=3, word=word, pos="adj")),
        pick_distractor=lambda rng: f"distractor{int(rng.integers(1000))}",
    )


@given(n=sizes, per_hit=per_hits, seed=seeds)
def test_parts_cover_every_candidate_once_in_ceil_n_over_size_parts(n: int, per_hit: int, seed: int) -> None:
    parts = split_into_parts(n, per_hit=per_hit, rng=np.random.default_rng(seed % 2**64))
    assert len(parts) == math.ceil(n / per_hit) == hit_count(n, per_hit=per_hit)
    assert sorted(i for part in parts for i in part) == list(range(n))
    if parts:
        lengths = [len(part) for part in parts]
        assert max(lengths) <= per_hit
        assert max(lengths) - min(lengths) <= 1
        assert min(lengths) >= 1


@given(n=sizes, per_hit=per_hits, seed=seeds)
def test_the_same_seed_gives_the_same_parts(n: int, per_hit: int, seed: int) -> None:
    first = split_into_parts(n, per_hit=per_hit, rng=target_rng(seed=seed, step=2, key="k"))
    second = split_into_parts(n, per_hit=per_hit, rng=target_rng(seed=seed, step=2, key="k"))
    assert first == second


@given(n=sizes, per_hit=per_hits, seed=seeds)
def test_the_parts_are_numpy_array_split_of_the_seeded_permutation(n: int, per_hit: int, seed: int) -> None:
    parts = split_into_parts(n, per_hit=per_hit, rng=np.random.default_rng(seed % 2**64))
    order = np.random.default_rng(seed % 2**64).permutation(n)
    expected = [part.tolist() for part in np.array_split(order, hit_count(n, per_hit=per_hit))] if n else []
    assert parts == expected


def test_parts_above_ten_are_refused() -> None:
    with pytest.raises(ValueError, match="1 to 10"):
        split_into_parts(30, per_hit=11, rng=np.random.default_rng(0))


@given(n=st.integers(min_value=1, max_value=120), seed=seeds)
def test_every_hit_has_one_target_copy_and_one_distractor_around_its_candidates(n: int, seed: int) -> None:
    hits = plan(n, seed)
    assert [hit.part for hit in hits] == list(range(math.ceil(n / 10)))
    seen: Counter[int] = Counter()
    for hit in hits:
        kinds = Counter(item.kind for item in hit.items)
        assert kinds[ItemKind.CONTROL_TARGET] == 1
        assert kinds[ItemKind.CONTROL_DISTRACTOR] == 1
        assert 1 <= kinds[ItemKind.CANDIDATE] <= 10
        for item in hit.items:
            if item.kind == ItemKind.CANDIDATE:
                assert item.candidate_id is not None
                seen[item.candidate_id] += 1
            else:
                assert item.candidate_id is None
        copy = next(item for item in hit.items if item.kind == ItemKind.CONTROL_TARGET)
        assert copy.text == "bright"
    assert seen == Counter(candidate.id for candidate in candidates(n))


@given(n=sizes, seed=seeds)
def test_the_same_seed_gives_the_same_hits_in_the_same_display_order(n: int, seed: int) -> None:
    assert plan(n, seed) == plan(n, seed)


def test_the_input_order_of_candidates_does_not_matter() -> None:
    rng_key = target_key(context_digest="d", offset=0, word="w", pos="noun")
    shuffled = candidates(23)[::-1]
    forward = plan_target_hits(
        target_word="w", candidates=candidates(23), per_hit=10, rng=target_rng(seed=5, step=2, key=rng_key),
        pick_distractor=lambda rng: "stone",
    )  # fmt: skip
    backward = plan_target_hits(
        target_word="w", candidates=shuffled, per_hit=10, rng=target_rng(seed=5, step=2, key=rng_key),
        pick_distractor=lambda rng: "stone",
    )  # fmt: skip
    assert forward == backward


def test_the_display_order_is_shuffled_so_controls_move_around() -> None:
    positions: Counter[int] = Counter()
    for seed in range(200):
        for hit in plan(10, seed):
            kinds = [item.kind for item in hit.items]
            positions[kinds.index(ItemKind.CONTROL_TARGET)] += 1
    # Twelve rows, two hundred HITs: the target copy lands in every row at least once.
    assert set(positions) == set(range(12))


def test_different_seeds_steps_and_targets_give_different_generators() -> None:
    draws = {
        tuple(target_rng(seed=seed, step=step, key=key).permutation(20))
        for seed in (0, 1)
        for step in (2, 3)
        for key in ("a", "b")
    }
    assert len(draws) == 8


def test_a_target_without_candidates_gets_no_hit() -> None:
    assert plan(0, 1) == []


@given(fresh=st.integers(0, 40), partial=st.integers(0, 40), seed=seeds)
def test_candidates_lacking_different_numbers_of_labels_never_share_a_hit(fresh: int, partial: int, seed: int) -> None:
    refs = candidates(fresh, assignments=7) + candidates(partial, assignments=2, first_id=500)
    hits = plan(0, seed, refs=refs)
    need = {ref.id: ref.assignments for ref in refs}
    assert [hit.part for hit in hits] == list(range(math.ceil(fresh / 10) + math.ceil(partial / 10)))
    for hit in hits:
        held = [item.candidate_id for item in hit.items if item.kind == ItemKind.CANDIDATE]
        assert {need[candidate_id] for candidate_id in held if candidate_id is not None} == {hit.assignments}
    assert sorted(c for hit in hits for item in hit.items if (c := item.candidate_id) is not None) == sorted(need)


def test_a_candidate_equal_to_the_target_is_shown_once_and_its_hit_drops_the_target_copy() -> None:
    same = CandidateRef(id=1, text="bright", key="bright", assignments=3)
    hits = plan(0, 7, word="Bright", refs=[same, *candidates(14)])
    [holding] = [hit for hit in hits if any(item.candidate_id == 1 for item in hit.items)]
    kinds = Counter(item.kind for item in holding.items)
    assert kinds[ItemKind.CONTROL_TARGET] == 0 and kinds[ItemKind.CONTROL_DISTRACTOR] == 1
    assert [item.text.casefold() for item in holding.items].count("bright") == 1
    [other] = [hit for hit in hits if hit is not holding]
    assert Counter(item.kind for item in other.items)[ItemKind.CONTROL_TARGET] == 1
