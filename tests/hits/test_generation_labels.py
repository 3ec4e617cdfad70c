"""Generation asks only for labels the benchmark lacks (docs/design.md §2, docs/batches.md), and the page agrees."""

from __future__ import annotations

import io
from collections import Counter

import pytest
from django.core.management import CommandError, call_command

from annotation.importers import benchmark_import
from annotation.models import Benchmark, Candidate, CandidateStage, Label
from annotation.tallies import tallies_targets_recount
from hits.models import HIT, Batch, HITItem
from hits.services import HitsGenerationError, hits_generate
from review.selectors import pipeline_progress
from schemes.swords.items import ItemKind
from tests.hits.generation_data import BRIGHT_CANDIDATES, SAT_CANDIDATES, TargetSpec, build_benchmark

pytestmark = pytest.mark.django_db

SWORDS_SMALL = "tests/fixtures/swords_small.json.gz"


@pytest.fixture
def benchmark() -> Benchmark:
    return build_benchmark("labelled")


def imported(benchmark: Benchmark, text: str, count: int) -> None:
    """Give a candidate ``count`` labels from an imported file, the first three of them step 2's (as SWORDS)."""
    candidate = Candidate.objects.get(target__benchmark=benchmark, text=text)
    Label.objects.bulk_create(
        Label(candidate=candidate, value="accept", step=2 if n < 3 else 3, origin="earlier.csv", position=n)
        for n in range(count)
    )
    # Written through the ORM, not a service: the candidate's tally is counted again, as after an import.
    tallies_targets_recount(target_ids=[candidate.target_id])


def asked(batch: Batch) -> dict[str, int]:
    """Candidate text -> assignments its HIT collects."""
    return dict(
        HITItem.objects.filter(hit__batch=batch, kind=ItemKind.CANDIDATE).values_list(
            "text", "hit__assignments_required"
        )
    )


def test_a_step2_batch_leaves_out_candidates_whose_imported_labels_satisfy_the_step(benchmark: Benchmark) -> None:
    for text in BRIGHT_CANDIDATES:
        imported(benchmark, text, 3)
    batch = hits_generate(benchmark=benchmark, step=2, seed=1)
    assert asked(batch) == dict.fromkeys([*SAT_CANDIDATES, "fast"], 3)


def test_a_candidate_lacking_some_labels_is_asked_only_for_those_in_a_hit_of_its_own(benchmark: Benchmark) -> None:
    imported(benchmark, "clever", 2)
    imported(benchmark, "smart", 1)
    batch = hits_generate(benchmark=benchmark, step=2, seed=1)
    wanted = asked(batch)
    assert (wanted.pop("clever"), wanted.pop("smart")) == (1, 2)
    assert set(wanted.values()) == {3}
    for hit in HIT.objects.filter(batch=batch).prefetch_related("items"):
        held = {item.text for item in hit.items.all() if item.kind == ItemKind.CANDIDATE}
        assert {asked(batch)[text] for text in held} == {hit.assignments_required}


def test_when_every_candidate_has_its_labels_nothing_needs_collecting_and_no_batch_is_made(
    benchmark: Benchmark,
) -> None:
    for text in Candidate.objects.filter(target__benchmark=benchmark).values_list("text", flat=True):
        imported(benchmark, text, 3)
    with pytest.raises(
        HitsGenerationError,
        match=r"nothing needs collecting in step 2 of benchmark 'labelled': 34 candidates already have their "
        r"3 valid step-2 labels \(imported or collected\)",
    ):
        hits_generate(benchmark=benchmark, step=2, seed=1)
    assert not Batch.objects.exists()


def test_step3_asks_each_survivor_only_for_what_it_lacks_of_its_ten_labels(benchmark: Benchmark) -> None:
    Candidate.objects.filter(target__benchmark=benchmark, text__in=BRIGHT_CANDIDATES).update(stage=CandidateStage.SCORE)
    imported(benchmark, "clever", 10)
    imported(benchmark, "smart", 5)
    for text in BRIGHT_CANDIDATES[2:]:
        imported(benchmark, text, 3)
    batch = hits_generate(benchmark=benchmark, step=3, seed=1)
    wanted = asked(batch)
    assert "clever" not in wanted
    assert wanted.pop("smart") == 5
    assert set(wanted.values()) == {7} and len(wanted) == 8


def test_the_pipeline_page_counts_as_waiting_exactly_what_a_batch_would_take(benchmark: Benchmark) -> None:
    for text in BRIGHT_CANDIDATES:
        imported(benchmark, text, 3)
    imported(benchmark, "perched", 2)
    [step2, _] = pipeline_progress(benchmark=benchmark, with_targets=False).steps
    batch = hits_generate(benchmark=benchmark, step=2, seed=1)
    assert step2.waiting == len(asked(batch)) == 24
    [step2, _] = pipeline_progress(benchmark=benchmark, with_targets=False).steps
    assert step2.waiting == 0
    # 10 + 2 labels of 34 x 3 are in, whatever the batch collects.
    assert (step2.labels_collected, step2.labels_needed) == (32, 102)


def test_a_candidate_spelled_like_its_target_never_sits_beside_the_target_copy() -> None:
    spec = TargetSpec("She is a bright student.", "bright", "adj", "bright", ["Bright", *BRIGHT_CANDIDATES[:9]])
    benchmark = build_benchmark("same", [spec], scheme_settings={"candidates_per_hit": 5})
    batch = hits_generate(benchmark=benchmark, step=2, seed=1)
    for hit in HIT.objects.filter(batch=batch).prefetch_related("items"):
        items = list(hit.items.all())
        kinds = Counter(item.kind for item in items)
        holds_it = any(item.text == "Bright" for item in items)
        assert kinds[ItemKind.CONTROL_TARGET] == (0 if holds_it else 1)
        assert kinds[ItemKind.CONTROL_DISTRACTOR] == 1
        assert sum(item.text.casefold() == "bright" for item in items) == 1
    assert HITItem.objects.filter(hit__batch=batch, text="Bright").count() == 1


def test_create_batch_says_nothing_needs_collecting_for_an_imported_fully_labelled_benchmark() -> None:
    benchmark_import(path_or_file=SWORDS_SMALL, benchmark_name="small")
    with pytest.raises(CommandError, match="nothing needs collecting in step 2 of benchmark 'small': 9 candidates"):
        call_command("create_batch", "small", "--step", "2", "--seed", "1", stdout=io.StringIO())
    assert not HIT.objects.exists()
