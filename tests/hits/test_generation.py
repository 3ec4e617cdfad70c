"""hits_generate on PostgreSQL: counts, controls, determinism, defaults and the open-batch rule."""

from __future__ import annotations

import gc
import hashlib
import json
import math
from collections import Counter
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from annotation.models import Benchmark, Candidate, CandidateStage, Target
from crowdlex.dialect import SQLITE
from hits.models import HIT, Batch, BatchStatus, HITItem
from hits.services import HitsGenerationError, batch_close, batch_reopen, hits_generate
from hits.services import generation as generation_module
from schemes.swords import distractors
from schemes.swords.items import ItemKind
from tests.hits.generation_data import BRIGHT_CANDIDATES, SPECS, TargetSpec, build_benchmark, layout, pinned_specs

pytestmark = pytest.mark.django_db


@pytest.fixture
def benchmark() -> Benchmark:
    return build_benchmark("gen")


def test_it_makes_ceil_n_over_ten_hits_per_target_with_every_candidate_once(benchmark: Benchmark) -> None:
    batch = hits_generate(benchmark=benchmark, step=2, seed=1)
    hits_per_target = Counter(HIT.objects.filter(batch=batch).values_list("target__word", flat=True))
    assert hits_per_target == {"sat": 3, "bright": 1, "quickly": 1}
    sat_sizes = sorted(
        Counter(
            HITItem.objects.filter(hit__target__word="sat", kind=ItemKind.CANDIDATE).values_list("hit_id", flat=True)
        ).values()
    )
    assert sat_sizes == [7, 8, 8]
    candidate_items = Counter(
        HITItem.objects.filter(hit__batch=batch, candidate__isnull=False).values_list("candidate_id", flat=True)
    )
    assert candidate_items == Counter(
        Candidate.objects.filter(target__benchmark=benchmark).values_list("id", flat=True)
    )
    assert set(candidate_items.values()) == {1}


def test_a_batch_is_planned_with_the_cyclic_collector_paused_and_it_runs_again_after(
    benchmark: Benchmark, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []
    plan = generation_module.batch_plan

    def spy(**kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return plan(**kwargs)

    monkeypatch.setattr(generation_module, "batch_plan", spy)
    assert gc.isenabled()
    hits_generate(benchmark=benchmark, step=2, seed=1)
    assert seen == [False]
    assert gc.isenabled()


def test_every_hit_has_one_copy_of_the_target_and_one_distractor(benchmark: Benchmark) -> None:
    batch = hits_generate(benchmark=benchmark, step=2, seed=1)
    for hit in HIT.objects.filter(batch=batch).select_related("target").prefetch_related("items"):
        items = list(hit.items.all())
        assert [item.position for item in items] == list(range(1, len(items) + 1))
        kinds = Counter(item.kind for item in items)
        assert kinds[ItemKind.CONTROL_TARGET] == kinds[ItemKind.CONTROL_DISTRACTOR] == 1
        copy = next(item for item in items if item.kind == ItemKind.CONTROL_TARGET)
        distractor = next(item for item in items if item.kind == ItemKind.CONTROL_DISTRACTOR)
        assert copy.text == hit.target.word
        candidate_texts = set(Candidate.objects.filter(target=hit.target).values_list("normalized", flat=True))
        assert distractor.text not in candidate_texts | {hit.target.word, hit.target.lemma}
        assert distractor.text not in distractors.excluded_for([hit.target.word, hit.target.lemma, *candidate_texts])
        assert distractor.text in distractors.distractor_pool().members


def test_the_batch_takes_its_defaults_from_the_benchmark(benchmark: Benchmark) -> None:
    benchmark.reward = Decimal("0.25")
    benchmark.save()
    step2 = hits_generate(benchmark=benchmark, step=2, seed=1)
    assert (step2.assignments_per_hit, step2.reward, step2.status) == (3, Decimal("0.25"), BatchStatus.OPEN)
    assert set(HIT.objects.filter(batch=step2).values_list("assignments_required", flat=True)) == {3}
    Candidate.objects.filter(target__benchmark=benchmark, text__in=BRIGHT_CANDIDATES[:4]).update(stage="score")
    step3 = hits_generate(
        benchmark=benchmark, step=3, seed=1, reward=Decimal("0.05"), assignment_duration=timedelta(minutes=5)
    )
    assert (step3.assignments_per_hit, step3.reward, step3.assignment_duration) == (
        7,
        Decimal("0.05"),
        timedelta(minutes=5),
    )
    custom = hits_generate(benchmark=benchmark, step=3, seed=2, assignments_per_hit=2, force=True,
                           targets=Target.objects.filter(word="bright"))  # fmt: skip
    assert custom.assignments_per_hit == 2


def test_step_three_judges_only_the_candidates_in_the_score_stage(benchmark: Benchmark) -> None:
    survivors = ["smart", "clever"]
    Candidate.objects.filter(target__benchmark=benchmark, text__in=survivors).update(stage=CandidateStage.SCORE)
    batch = hits_generate(benchmark=benchmark, step=3, seed=4)
    items = HITItem.objects.filter(hit__batch=batch, kind=ItemKind.CANDIDATE)
    assert sorted(items.values_list("text", flat=True)) == ["clever", "smart"]
    assert HIT.objects.filter(batch=batch).count() == 1


def test_two_benchmarks_built_alike_get_the_same_hits_under_the_same_seed() -> None:
    first = build_benchmark("first")
    second = build_benchmark("second", reverse=True)
    hits_generate(benchmark=first, step=2, seed=42)
    hits_generate(benchmark=second, step=2, seed=42)
    assert layout(first) == layout(second)
    third = build_benchmark("third")
    hits_generate(benchmark=third, step=2, seed=43)
    assert layout(third) != layout(first)


def test_a_target_gets_the_same_hits_whichever_targets_share_its_batch() -> None:
    alone = build_benchmark("alone", [SPECS[0]])
    together = build_benchmark("together")
    hits_generate(benchmark=alone, step=2, seed=9)
    hits_generate(benchmark=together, step=2, seed=9)
    assert layout(alone) == [hit for hit in layout(together) if hit[0] == "sat"]


def test_the_distractor_avoids_candidates_proposed_for_the_same_word_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    # A pool of three words: two are synonyms the benchmark knows, so the third must be picked.
    pool = distractors.build_pool(["stone", "ladder", "garden"])
    monkeypatch.setattr(distractors, "distractor_pool", lambda: pool)
    specs = [
        TargetSpec("The cat sat on the mat.", "sat", "verb", "sit", ["perched", "stones"]),
        TargetSpec("We sit by the fire.", "sit", "verb", "sit", ["ladder"]),
    ]
    benchmark = build_benchmark("synonyms", specs)
    batch = hits_generate(benchmark=benchmark, step=2, seed=3, targets=Target.objects.filter(word="sat"))
    distractor_texts = set(
        HITItem.objects.filter(hit__batch=batch, kind=ItemKind.CONTROL_DISTRACTOR).values_list("text", flat=True)
    )
    assert distractor_texts == {"garden"}


def test_without_targets_it_skips_candidates_already_in_an_open_batch(benchmark: Benchmark) -> None:
    first = hits_generate(benchmark=benchmark, step=2, seed=1)
    with pytest.raises(HitsGenerationError, match=r"nothing needs collecting.*34 candidates are being collected"):
        hits_generate(benchmark=benchmark, step=2, seed=1)
    target = Target.objects.get(benchmark=benchmark, word="bright")
    Candidate.objects.create(target=target, text="astute")
    second = hits_generate(benchmark=benchmark, step=2, seed=1)
    items = HITItem.objects.filter(hit__batch=second, kind=ItemKind.CANDIDATE)
    assert list(items.values_list("text", flat=True)) == ["astute"]
    assert first.hits.count() == 5


def test_with_targets_it_refuses_candidates_already_in_an_open_batch_unless_forced(benchmark: Benchmark) -> None:
    first = hits_generate(benchmark=benchmark, step=2, seed=1)
    bright = Target.objects.get(benchmark=benchmark, word="bright")
    with pytest.raises(HitsGenerationError, match=rf"target {bright.pk} in batch {first.pk}.*force"):
        hits_generate(benchmark=benchmark, step=2, seed=1, targets=[bright])
    forced = hits_generate(benchmark=benchmark, step=2, seed=1, targets=[bright.pk], force=True)
    assert forced.hits.count() == 1
    batch_close(batch=first)
    batch_close(batch=forced)
    again = hits_generate(benchmark=benchmark, step=2, seed=1, targets=[bright])
    assert again.hits.count() == 1


def test_a_closed_batch_reopens_only_if_no_open_batch_holds_its_candidates(benchmark: Benchmark) -> None:
    first = hits_generate(benchmark=benchmark, step=2, seed=1)
    assert batch_close(batch=first) is True
    assert batch_close(batch=first) is False
    assert batch_reopen(batch=first) is True
    batch_close(batch=first)
    hits_generate(benchmark=benchmark, step=2, seed=2)
    with pytest.raises(ValueError, match="cannot reopen"):
        batch_reopen(batch=first)
    assert Batch.objects.get(pk=first.pk).status == BatchStatus.CLOSED


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"step": 4}, "step must be one of 1, 2, 3"),
        ({"backend": "carrier-pigeon"}, "backend must be one of"),
        ({"colour": "blue"}, "unknown batch options: colour"),
        ({"assignments_per_hit": 0}, "at least 1"),
        ({"assignments_per_hit": 101}, "at most 100"),
        ({"reward": Decimal("-1")}, "must not be negative"),
        ({"targets": []}, "list of targets is empty"),
        ({"targets": [999_999]}, "targets 999999 do not exist"),
    ],
)
def test_it_explains_what_is_wrong_with_the_request(benchmark: Benchmark, arguments: dict, message: str) -> None:
    with pytest.raises(HitsGenerationError, match=message):
        hits_generate(**{"benchmark": benchmark, "step": 2, "seed": 1, **arguments})
    assert not Batch.objects.exists()


def test_targets_of_another_benchmark_are_refused(benchmark: Benchmark) -> None:
    other = build_benchmark("other")
    with pytest.raises(HitsGenerationError, match="do not exist in benchmark 'gen'"):
        hits_generate(benchmark=benchmark, step=2, seed=1, targets=Target.objects.filter(benchmark=other))


def test_odd_text_survives_the_bulk_copy_and_the_portable_insert(monkeypatch: pytest.MonkeyPatch) -> None:
    odd = ['say "hi", twice', "back\\slash", "tab\there", "line\nbreak", "N", "\\N", "ça va"]
    spec = TargetSpec('Odd words, "quoted".', "words", "noun", "word", odd)
    copied = build_benchmark("copied", [spec])
    hits_generate(benchmark=copied, step=2, seed=1)
    monkeypatch.setattr(generation_module, "dialect", lambda: SQLITE)
    inserted = build_benchmark("inserted", [spec])
    hits_generate(benchmark=inserted, step=2, seed=1)
    assert layout(copied) == layout(inserted)
    texts = set(
        HITItem.objects.filter(hit__batch__benchmark=copied, kind=ItemKind.CANDIDATE).values_list("text", flat=True)
    )
    assert texts == set(odd)
    assert HITItem.objects.filter(hit__batch__benchmark=copied, candidate__isnull=True).count() == 2


def test_a_batch_of_many_targets_has_the_expected_totals() -> None:
    specs = [
        TargetSpec(f"Sentence {i} has a word.", "word", "noun", "word", [f"w{i}x{j}" for j in range(n)])
        for i, n in enumerate([1, 9, 10, 11, 19, 20, 21, 35])
    ]
    benchmark = build_benchmark("totals", specs)
    batch = hits_generate(benchmark=benchmark, step=2, seed=11)
    expected_hits = sum(math.ceil(n / 10) for n in [1, 9, 10, 11, 19, 20, 21, 35])
    assert batch.hits.count() == expected_hits
    assert HITItem.objects.filter(hit__batch=batch).count() == 126 + 2 * expected_hits


def test_the_hits_of_a_seed_stay_the_same_byte_for_byte() -> None:
    """The layout (order, parts, controls, distractors, display order) of twenty targets under one
    seed, pinned by its digest: a faster generation must give exactly these HITs."""
    benchmark = build_benchmark("pinned", pinned_specs())
    hits_generate(benchmark=benchmark, step=2, seed=2024)
    hits = layout(benchmark)
    assert (len(hits), sum(len(items) for *_, items in hits)) == (45, 438)
    digest = hashlib.sha256(json.dumps(hits).encode()).hexdigest()
    assert digest == "72ab2f9436d1b00b5cfae5a72b1b7ead024a59092679771c1077537308d0d28f"
