"""The statistics kept per target (analysis.services.benchmark_statistics_kept, docs/design.md §7
"Incremental figures"): after any sequence of submits, refreshes, exclusions, decisions, blocks and
imports they equal the statistics computed from every label, a submit reads again only the targets
it touched, and the statistics page shows agreement as last computed in the background until the
task brings it up to date."""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache
from django.urls import reverse

import analysis.services.target_rows as target_rows
from analysis.background import background_figures, background_figures_refresh
from analysis.selectors import benchmark_candidates
from analysis.services import benchmark_data, benchmark_statistics, benchmark_statistics_kept, source_profiles
from analysis.source_yield import CountProfile
from annotation import changes as kept_figures
from annotation.changes import benchmark_changed
from annotation.models import Benchmark, Candidate
from annotation.selectors import valid_labels
from annotation.services import benchmark_import
from hits.models import HIT, HITItem
from hits.services import candidate_exclude, worker_block
from review.adjudication.services import candidate_override_set, overrides_apply_set
from review.services import benchmark_refresh
from schemes.swords.figures import AGREEMENT_FIGURES
from schemes.swords.items import ItemKind
from tests.base import Cast
from tests.review.builders import honest, make_benchmark, simulated, step2_batch, work_once

pytestmark = pytest.mark.django_db


def _fresh(benchmark: Benchmark) -> dict[str, Any]:
    """The statistics from every valid label, nothing kept."""
    return benchmark_statistics(benchmark=benchmark, data=benchmark_data(benchmark=benchmark))


def _profiles_from_labels(benchmark: Benchmark) -> list[CountProfile]:
    """The per-source table's rows counted from every valid label, one candidate at a time."""
    values: dict[int, Counter[str]] = defaultdict(Counter)
    for candidate_id, value in (
        valid_labels().filter(candidate__target__benchmark=benchmark).values_list("candidate_id", "value")
    ):
        values[candidate_id][value] += 1
    rows: Counter[tuple[str, bool, int, int, int]] = Counter()
    for candidate in benchmark_candidates(benchmark=benchmark):
        named = candidate.sources or []
        counted = values[candidate.pk]
        for source in named or [""]:
            rows[(source, len(named) <= 1, counted["accept"], counted["reject"], counted["abstain"])] += 1
    return [CountProfile(*key, count) for key, count in sorted(rows.items())]


def _not_excluded(benchmark: Benchmark) -> list[Candidate]:
    """The candidates a researcher may exclude or decide, in a fixed order (so a seed repeats)."""
    return list(Candidate.objects.filter(target__benchmark=benchmark).exclude(stage="excluded").order_by("pk"))


def _mixed(rng: random.Random) -> Callable[[HITItem], str]:
    """Controls right, every other item accepted, rejected or abstained on at random."""

    def answer(item: HITItem) -> str:
        if item.kind == ItemKind.CONTROL_TARGET:
            return "accept"
        if item.kind == ItemKind.CONTROL_DISTRACTOR:
            return "reject"
        return rng.choice(["accept", "accept", "reject", "abstain"])

    return answer


def _import_more(benchmark: Benchmark, tmp_path: Path, number: int) -> None:
    path = tmp_path / f"more-{number}.jsonl"
    context = f"A dog number {number} ran along the beach."
    record = {"context": context, "target": "ran", "offset": context.index(" ran ") + 1, "pos": "verb"}
    candidates = {"text": "sprinted", "sources": ["coinco", "thesaurus"], "labels": ["accept", "reject", "abstain"]}
    path.write_text(json.dumps({**record, "candidates": [candidates, "dashed", "raced"]}) + "\n")
    benchmark_import(path_or_file=str(path), benchmark_name=benchmark.name)


@pytest.mark.parametrize("seed", [1, 2])
def test_after_any_sequence_of_changes_the_kept_statistics_equal_the_statistics_of_every_label(
    cast: Cast, tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Buckets of two targets: the sums are taken and added again across several, as at full size.
    monkeypatch.setattr(kept_figures, "BUCKET_TARGETS", 2)
    rng = random.Random(seed)
    benchmark = make_benchmark(targets=5, candidates=8)
    step2_batch(benchmark)
    workers = [simulated(f"s{seed}-{number}") for number in range(4)]
    assert benchmark_statistics_kept(benchmark=benchmark) == _fresh(benchmark)

    def submit() -> None:
        work_once(rng.choice(workers), benchmark, _mixed(rng))

    def refresh() -> None:
        benchmark_refresh(benchmark=benchmark, touched_only=rng.random() < 0.7, full=rng.random() < 0.3)

    def exclude() -> None:
        candidate_exclude(candidate=rng.choice(_not_excluded(benchmark)), by=cast.researcher)

    def decide() -> None:
        overrides_apply_set(benchmark=benchmark, apply=True, by=cast.researcher)
        candidate = rng.choice(_not_excluded(benchmark))
        candidate_override_set(
            candidate=candidate, decision=rng.choice(["acceptable", "inconceivable"]), reason="read", by=cast.researcher
        )

    def block() -> None:
        worker_block(worker=rng.choice(workers), reason="test", by=cast.researcher)

    def lose_a_bucket() -> None:
        # The cache evicts one bucket of the kept rows, then a submit changes a target.
        keys = [key for key in _kept_bucket_keys(benchmark)]
        if keys:
            cache.delete(rng.choice(keys))
        submit()

    imported = [0]

    def more() -> None:
        imported[0] += 1
        _import_more(benchmark, tmp_path, imported[0])

    changes: list[tuple[Callable[[], None], int]] = [
        (submit, 10),
        (refresh, 3),
        (exclude, 1),
        (decide, 1),
        (block, 1),
        (more, 1),
        (lose_a_bucket, 1),
    ]
    actions = [action for action, weight in changes for _ in range(weight)]
    for _ in range(24):
        rng.choice(actions)()
        assert benchmark_statistics_kept(benchmark=benchmark) == _fresh(benchmark)
        assert source_profiles(benchmark=benchmark) == _profiles_from_labels(benchmark)
    figures = _fresh(benchmark)
    assert figures["labels"] > 0 and figures["per_target"]["acceptable"], "the sequence scored candidates"
    assert figures["by_source"].keys() > {"thesaurus-only"}, "the imports brought other source groups"


def _kept_bucket_keys(benchmark: Benchmark) -> list[str]:
    """The cache keys of the buckets the kept rows' index names."""
    prefix = f"benchmark-kept:{benchmark.pk}:target-rows-summed"
    index = cache.get(prefix)
    if index is None:
        return []
    return [f"{prefix}:{number}:{token}" for number, (token, _) in index.buckets.items()]


def test_a_total_not_brought_up_to_date_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted bug: a change adds its targets' new rows to the sums without taking their rows as
    kept out of them. The check of the test above catches it."""
    monkeypatch.setattr(target_rows, "rows_total_taken", lambda total, rows: total)
    benchmark = make_benchmark(targets=4, candidates=6)
    step2_batch(benchmark)
    assert benchmark_statistics_kept(benchmark=benchmark) == _fresh(benchmark)
    work_once(simulated("ann"), benchmark, honest({"perched": "accept"}))
    assert benchmark_statistics_kept(benchmark=benchmark) != _fresh(benchmark)


def test_after_a_submit_only_the_targets_it_touched_are_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    benchmark = make_benchmark(targets=4, candidates=6)
    step2_batch(benchmark)
    read: list[list[int] | None] = []
    real = target_rows.statistics_target_rows

    def recorded(benchmark: Benchmark, target_ids: list[int] | None) -> dict[int, Any]:
        read.append(target_ids)
        return real(benchmark, target_ids)

    monkeypatch.setattr(target_rows, "statistics_target_rows", recorded)
    assert benchmark_statistics_kept(benchmark=benchmark) == _fresh(benchmark)
    assert read == [None]
    assignment = work_once(simulated("ann"), benchmark, honest({"perched": "accept"}))
    assert assignment is not None
    assert benchmark_statistics_kept(benchmark=benchmark) == _fresh(benchmark)
    assert read[-1] == [HIT.objects.get(pk=assignment.hit_id).target_id]
    # A lost cache reads every target again.
    cache.clear()
    assert benchmark_statistics_kept(benchmark=benchmark) == _fresh(benchmark)
    assert read[-1] is None


def test_a_change_naming_every_target_reads_the_candidates_once_for_both_tables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    benchmark = make_benchmark(targets=4, candidates=6)
    step2_batch(benchmark)
    work_once(simulated("ann"), benchmark, honest({"perched": "accept"}))
    read: list[list[int] | None] = []
    real = target_rows.statistics_target_rows

    def recorded(benchmark: Benchmark, target_ids: list[int] | None) -> dict[int, Any]:
        read.append(target_ids)
        return real(benchmark, target_ids)

    monkeypatch.setattr(target_rows, "statistics_target_rows", recorded)
    benchmark_changed(benchmark_id=benchmark.pk)
    assert benchmark_statistics_kept(benchmark=benchmark) == _fresh(benchmark)
    assert source_profiles(benchmark=benchmark) == _profiles_from_labels(benchmark)
    assert read == [None], "Table 2 and the per-source table come from one read of every target"
    # In the other order too: the per-source table reads, Table 2 sums what it read.
    benchmark_changed(benchmark_id=benchmark.pk)
    assert source_profiles(benchmark=benchmark) == _profiles_from_labels(benchmark)
    assert benchmark_statistics_kept(benchmark=benchmark) == _fresh(benchmark)
    assert read == [None, None]


def test_the_page_shows_agreement_as_last_computed_until_the_background_task_brings_it_up_to_date(
    cast: Cast, client: Any, django_capture_on_commit_callbacks: Any
) -> None:
    benchmark = make_benchmark(targets=3, candidates=6, created_by=cast.researcher)
    step2_batch(benchmark)
    for number in range(3):
        work_once(simulated(f"early-{number}"), benchmark, _mixed(random.Random(number)))
    client.force_login(cast.researcher)
    url = reverse("analysis-statistics", args=[benchmark.name])
    first = client.get(url)
    assert first.status_code == 200
    assert b"being computed again" not in first.content
    before = background_figures(benchmark=benchmark, name=AGREEMENT_FIGURES)
    assert before.current

    work_once(simulated("later"), benchmark, _mixed(random.Random(9)))
    with django_capture_on_commit_callbacks() as queued:
        stale = client.get(url)
    assert b"being computed again" in stale.content, "the page says its agreement is older than the benchmark"
    assert len(queued) == 1, "one task is queued for the change"
    assert stale.context["statistics"] == _fresh(benchmark), "Table 2 is current all the same"
    with django_capture_on_commit_callbacks():
        client.get(url)
    assert len(queued) == 1, "a second reader finds the task queued"

    background_figures_refresh(benchmark_id=benchmark.pk, name=AGREEMENT_FIGURES)
    after = client.get(url)
    assert b"being computed again" not in after.content
    from analysis.services import benchmark_agreement

    fresh = benchmark_agreement(benchmark=benchmark)
    assert after.context["agreement"] == fresh
    assert after.context["agreement"]["labels"] > before.value["agreement"]["labels"]
