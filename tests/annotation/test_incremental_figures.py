"""Figures kept per target (annotation.changes.benchmark_by_target, docs/design.md §7 "Incremental
figures"): after any sequence of submits, returns, refreshes, bot-signal runs, exclusions, blocks and imports they
equal the figures computed from the rows with an empty cache, and after a submit or a refresh of
touched work only the targets that work touched are computed again."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from django.contrib import admin
from django.core.cache import cache

import schemes.swords.evaluation as evaluation_module
import schemes.swords.evaluation.gold as gold_module
from analysis.evaluation import EvaluationOptions
from analysis.services import benchmark_version, benchmark_version_now
from annotation import changes as kept_figures
from annotation import selectors
from annotation.admin import LabelAdmin
from annotation.changes import KeptFigures, benchmark_by_target, benchmark_kept
from annotation.models import Benchmark, Candidate, Label, Target, Worker
from annotation.selectors import _target_counts, benchmark_counts, counts_summed, import_list
from annotation.services import benchmark_import
from hits.models import HIT, Assignment, AssignmentStatus
from hits.services import assignment_claim_next, assignment_return, candidate_exclude, worker_block
from review.services import benchmark_refresh, benchmark_signals, review_settings_update
from schemes.swords.evaluation import SwordsEvaluator, metrics
from schemes.swords.evaluation.gold import BenchmarkGold
from tests.base import Cast
from tests.review.builders import honest, make_benchmark, simulated, spammer, step2_batch, work_once

pytestmark = pytest.mark.django_db


class Recorded:
    """The per-target counts of a benchmark read through ``benchmark_by_target``, recording which
    targets each read computed (None: all of them)."""

    def __init__(self, benchmark: Benchmark) -> None:
        self.benchmark = benchmark
        self.computed: list[list[int] | None] = []

    def read(self) -> dict[int, tuple[int, int, int, int]]:
        def compute(target_ids: list[int] | None) -> dict[int, tuple[int, int, int, int]]:
            self.computed.append(target_ids)
            return _target_counts(self.benchmark, target_ids)

        return benchmark_by_target(benchmark_id=self.benchmark.pk, name="test-counts", compute=compute)


def _fresh(benchmark: Benchmark) -> dict[int, tuple[int, int, int, int]]:
    return _target_counts(benchmark, None)


def test_after_a_submit_only_the_targets_of_the_workers_work_are_counted_again() -> None:
    benchmark = make_benchmark(targets=4, candidates=8)
    step2_batch(benchmark)
    recorded = Recorded(benchmark)
    assert recorded.read() == _fresh(benchmark)
    assert recorded.computed == [None]

    assignment = work_once(simulated("ann"), benchmark, honest())
    assert assignment is not None
    assert recorded.read() == _fresh(benchmark)
    target_id = HIT.objects.get(pk=assignment.hit_id).target_id
    assert recorded.computed[-1] == [target_id], "only the submitted HIT's target is counted again"

    # Nothing new: nothing is counted.
    computed = len(recorded.computed)
    assert recorded.read() == _fresh(benchmark)
    assert len(recorded.computed) == computed

    # The refresh that looks at that work changes that target only.
    benchmark_refresh(benchmark=benchmark, touched_only=True)
    assert recorded.read() == _fresh(benchmark)
    assert recorded.computed[-1] in ([target_id], None) and len(recorded.computed) == computed + 1
    assert recorded.computed[-1] == [target_id]


def test_a_change_that_names_no_targets_counts_every_target_again(cast: Cast) -> None:
    benchmark = make_benchmark(targets=3, candidates=6)
    step2_batch(benchmark)
    recorded = Recorded(benchmark)
    recorded.read()
    candidate = Candidate.objects.filter(target__benchmark=benchmark).order_by("pk").first()
    assert candidate is not None
    assert candidate_exclude(candidate=candidate, by=cast.researcher)
    assert recorded.read() == _fresh(benchmark)
    assert recorded.computed[-1] is None


def test_a_lost_cache_counts_every_target_again() -> None:
    benchmark = make_benchmark(targets=2, candidates=6)
    step2_batch(benchmark)
    recorded = Recorded(benchmark)
    recorded.read()
    work_once(simulated("ann"), benchmark, honest())
    cache.clear()
    assert recorded.read() == _fresh(benchmark)
    assert recorded.computed[-1] is None


def _import_more(benchmark: Benchmark, tmp_path: Path, number: int) -> None:
    path = tmp_path / f"more-{number}.jsonl"
    context = f"A dog number {number} ran along the beach."
    record = {"context": context, "target": "ran", "offset": context.index(" ran ") + 1, "pos": "verb"}
    path.write_text(json.dumps({**record, "candidates": ["sprinted", "dashed", "raced"]}) + "\n")
    benchmark_import(path_or_file=str(path), benchmark_name=benchmark.name)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_after_any_sequence_of_changes_the_kept_figures_equal_a_fresh_count(
    cast: Cast, tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Buckets of two targets: the benchmark's targets sit in several, as at full size.
    monkeypatch.setattr(kept_figures, "BUCKET_TARGETS", 2)
    rng = random.Random(seed)
    benchmark = make_benchmark(targets=6, candidates=10)
    step2_batch(benchmark)
    # Bot signals that block as they flag: their blocks reach the figures through the refresh.
    review_settings_update(benchmark=benchmark, auto_block_signals=True, by=cast.researcher)
    recorded = Recorded(benchmark)
    recorded.read()
    workers = [simulated(f"w{seed}-{number}") for number in range(4)]

    def submit() -> None:
        worker = rng.choice(workers)
        work_once(worker, benchmark, spammer if worker is workers[0] else honest())

    def give_back() -> None:
        assignment = assignment_claim_next(worker=rng.choice(workers), benchmark=benchmark)
        if assignment is not None:
            assignment_return(assignment=assignment)

    def refresh_touched() -> None:
        benchmark_refresh(benchmark=benchmark, touched_only=True)

    def refresh_all() -> None:
        benchmark_refresh(benchmark=benchmark, full=True)

    def exclude() -> None:
        candidates = list(Candidate.objects.filter(target__benchmark=benchmark).exclude(stage="excluded"))
        candidate_exclude(candidate=rng.choice(candidates), by=cast.researcher)

    def bot_signals() -> None:
        assert benchmark_signals(benchmark=benchmark, force=True, wait=True).ran

    def block() -> None:
        worker_block(worker=rng.choice(workers), reason="test", by=cast.researcher)

    def delete_label() -> None:
        # By hand, as the admin deletes one: most often the highest, which the version records.
        labels = Label.objects.filter(benchmark=benchmark).order_by("-pk")
        label = labels.first() if rng.random() < 0.7 else rng.choice(list(labels))
        if label is not None:
            LabelAdmin(Label, admin.site).delete_model(None, label)  # type: ignore[arg-type]

    imported = [0]

    def more() -> None:
        imported[0] += 1
        _import_more(benchmark, tmp_path, imported[0])

    changes: list[tuple[Callable[[], None], int]] = [
        (submit, 8),
        (give_back, 2),
        (refresh_touched, 3),
        (refresh_all, 1),
        (exclude, 1),
        (block, 1),
        (bot_signals, 2),
        (more, 1),
        (delete_label, 2),
    ]
    actions = [action for action, weight in changes for _ in range(weight)]
    for _ in range(30):
        rng.choice(actions)()
        assert recorded.read() == _fresh(benchmark)
        _assert_kept_equal_fresh(_kept_summed(benchmark), benchmark)
        assert benchmark_counts(benchmark=benchmark) == _counted(benchmark)
        assert benchmark_version_now(benchmark=benchmark) == benchmark_version(benchmark=benchmark)
        assert {row.origin: row.labels for row in import_list(benchmark=benchmark)} == _imported(benchmark)
        assert _import_rows_listed(benchmark) == _import_rows_counted(benchmark)
        assert _oracle(benchmark) == _whole_oracle(benchmark)
    partial = [computed for computed in recorded.computed if computed is not None]
    assert partial, "some reads counted only the targets changed"
    assert len({target_id // 2 for target_id in _fresh(benchmark)}) > 1, "the targets sat in several buckets"
    assert Assignment.objects.filter(hit__batch__benchmark=benchmark, status=AssignmentStatus.SUBMITTED).exists()
    assert Worker.objects.filter(external_id__startswith=f"w{seed}-").count() == len(workers)


def _oracle(benchmark: Benchmark) -> dict[str, Any]:
    """The evaluation's oracle row as the page reads it: kept per target."""
    return SwordsEvaluator().oracle(benchmark, EvaluationOptions())


def _whole_oracle(benchmark: Benchmark) -> dict[str, Any]:
    """The oracle row evaluated from every target at once, nothing kept."""
    gold = BenchmarkGold(benchmark)
    return metrics.evaluate(gold=gold.targets, rankings=gold.oracle_rankings()).as_dict()


def test_the_oracle_row_kept_per_target_evaluates_only_the_targets_a_submit_touched(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    benchmark = make_benchmark(targets=4, candidates=8)
    step2_batch(benchmark)
    for number in range(3):
        work_once(simulated(f"early-{number}"), benchmark, honest())
    evaluated: list[list[int] | None] = []
    real = gold_module.oracle_parts

    def recorded(benchmark: Benchmark, split: str | None, target_ids: list[int] | None) -> dict[int, Any]:
        evaluated.append(target_ids)
        return real(benchmark, split, target_ids)

    monkeypatch.setattr(evaluation_module, "oracle_parts", recorded)
    assert _oracle(benchmark) == _whole_oracle(benchmark)
    assert evaluated == [None]
    assert _oracle(benchmark)["targets_evaluated"] > 0, "the oracle evaluates scored targets"

    assignment = work_once(simulated("ann"), benchmark, honest())
    assert assignment is not None
    assert _oracle(benchmark) == _whole_oracle(benchmark)
    assert evaluated[-1] == [HIT.objects.get(pk=assignment.hit_id).target_id]


def _counted(benchmark: Benchmark) -> dict[str, int]:
    from annotation.models import Context, Label

    return {
        "contexts": Context.objects.filter(benchmark=benchmark).count(),
        "targets": Target.objects.filter(benchmark=benchmark).count(),
        "candidates": Candidate.objects.filter(target__benchmark=benchmark).count(),
        "labels": Label.objects.filter(candidate__target__benchmark=benchmark).count(),
    }


def test_a_submit_and_its_refresh_count_again_the_targets_submitted_since_the_last_refresh_not_all_its_work() -> None:
    benchmark = make_benchmark(targets=4, candidates=8)
    step2_batch(benchmark)
    worker = simulated("ann")
    earlier: set[int] = set()
    while len(earlier) < 2:
        assignment = work_once(worker, benchmark, honest())
        assert assignment is not None
        earlier.add(HIT.objects.get(pk=assignment.hit_id).target_id)
    benchmark_refresh(benchmark=benchmark, touched_only=True)
    recorded = Recorded(benchmark)
    recorded.read()

    assignment = work_once(worker, benchmark, honest())
    assert assignment is not None
    assert recorded.read() == _fresh(benchmark)
    target_id = HIT.objects.get(pk=assignment.hit_id).target_id
    assert recorded.computed[-1] == [target_id]

    # The refresh of that work names that target too, not the worker's earlier ones.
    benchmark_refresh(benchmark=benchmark, touched_only=True)
    assert recorded.read() == _fresh(benchmark)
    assert recorded.computed[-1] == [target_id]


def _imported(benchmark: Benchmark) -> dict[str, int]:
    """Each import's labels counted from the rows."""
    from annotation.models import Import, Label

    labels = Label.objects.filter(candidate__target__benchmark=benchmark, assignment__isnull=True)
    return {
        origin: labels.filter(origin=origin).count()
        for origin in Import.objects.filter(benchmark=benchmark).values_list("origin", flat=True)
    }


def _kept_summed(
    benchmark: Benchmark,
    combine: Callable[[Iterable[tuple[int, int, int, int]]], tuple[int, int, int, int]] = counts_summed,
) -> KeptFigures[tuple[int, int, int, int], tuple[int, int, int, int]]:
    return benchmark_kept(
        benchmark_id=benchmark.pk,
        name="test-counts-summed",
        compute=lambda target_ids: _target_counts(benchmark, target_ids),
        summarise=counts_summed,
        combine=combine,
    )


def _assert_kept_equal_fresh(
    kept: KeptFigures[tuple[int, int, int, int], tuple[int, int, int, int]], benchmark: Benchmark
) -> None:
    """Every target's kept figures, the figures of some targets read from their buckets alone, and
    the total kept beside them equal a count from the rows."""
    fresh = _fresh(benchmark)
    assert kept.all() == fresh
    some = sorted(fresh)[::2]
    assert kept.of(some) == {target_id: fresh[target_id] for target_id in some}
    assert kept.total == counts_summed(fresh.values())


def test_the_extent_after_a_submit_reads_its_targets_bucket_alone_and_after_the_highest_label_deleted_counts_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The counts and highest ids an evaluation's version records, kept by difference: a submit
    counts its target again and reads its bucket, no other bucket nor a summary of each; a delete
    of the highest label counts every target again (its highest id is not known from the total)."""
    monkeypatch.setattr(kept_figures, "BUCKET_TARGETS", 2)
    benchmark = make_benchmark(targets=6, candidates=6)
    step2_batch(benchmark)
    computed: list[list[int] | None] = []
    real = selectors._target_counts

    def recorded(benchmark: Benchmark, target_ids: list[int] | None) -> dict[int, tuple[int, int, int, int]]:
        computed.append(target_ids)
        return real(benchmark, target_ids)

    monkeypatch.setattr(selectors, "_target_counts", recorded)
    read_keys: list[str] = []
    real_get_many = cache.get_many

    def get_many(keys: Any, *args: Any, **kwargs: Any) -> Any:
        read_keys.extend(keys)
        return real_get_many(keys, *args, **kwargs)

    monkeypatch.setattr(cache, "get_many", get_many)
    assert benchmark_version_now(benchmark=benchmark) == benchmark_version(benchmark=benchmark)
    assert computed == [None]
    prefix = f"benchmark-kept:{benchmark.pk}:counts-extent-summed"
    index = cache.get(prefix)
    assert len(index.buckets) > 1 and all(summary is None for _, summary in index.buckets.values())

    assignment = work_once(simulated("ann"), benchmark, honest())
    assert assignment is not None
    target_id = HIT.objects.get(pk=assignment.hit_id).target_id
    read_keys.clear()
    assert benchmark_version_now(benchmark=benchmark) == benchmark_version(benchmark=benchmark)
    assert computed[-1] == [target_id]
    buckets = {key for key in read_keys if key.startswith(f"{prefix}:")}
    assert buckets == {f"{prefix}:{target_id // 2}:{index.buckets[target_id // 2][0]}"}

    highest = Label.objects.filter(benchmark=benchmark).order_by("-pk").first()
    assert highest is not None
    LabelAdmin(Label, admin.site).delete_model(None, highest)  # type: ignore[arg-type]
    assert benchmark_version_now(benchmark=benchmark) == benchmark_version(benchmark=benchmark)
    assert computed[-2:] == [[highest.candidate.target_id], None]


def test_a_change_rewrites_only_the_buckets_of_its_targets_and_a_lost_bucket_is_counted_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(kept_figures, "BUCKET_TARGETS", 2)
    benchmark = make_benchmark(targets=6, candidates=6)
    step2_batch(benchmark)
    computed: list[list[int] | None] = []

    def compute(target_ids: list[int] | None) -> dict[int, tuple[int, int, int, int]]:
        computed.append(target_ids)
        return _target_counts(benchmark, target_ids)

    def read() -> KeptFigures[tuple[int, int, int, int], tuple[int, int, int, int]]:
        return benchmark_kept(
            benchmark_id=benchmark.pk,
            name="test-buckets",
            compute=compute,
            summarise=counts_summed,
            combine=counts_summed,
        )

    _assert_kept_equal_fresh(read(), benchmark)
    prefix = f"benchmark-kept:{benchmark.pk}:test-buckets"
    before = dict(cache.get(prefix).buckets)
    assert len(before) > 1

    assignment = work_once(simulated("ann"), benchmark, honest())
    assert assignment is not None
    target_id = HIT.objects.get(pk=assignment.hit_id).target_id
    _assert_kept_equal_fresh(read(), benchmark)
    after = cache.get(prefix).buckets
    assert {number for number in after if after[number][0] != before[number][0]} == {target_id // 2}
    assert cache.get(f"{prefix}:{target_id // 2}:{before[target_id // 2][0]}") is None, "the replaced bucket is gone"

    # A bucket the cache lost is counted again from its targets alone.
    lost = min(number for number in after if number != target_id // 2)
    cache.delete(f"{prefix}:{lost}:{after[lost][0]}")
    computed.clear()
    _assert_kept_equal_fresh(read(), benchmark)
    assert computed == [list(range(2 * lost, 2 * lost + 2))]


def test_a_total_not_brought_up_to_date_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted bug: the total kept beside the figures stays as first summed. The check above
    catches it after the first submit."""
    monkeypatch.setattr(kept_figures, "BUCKET_TARGETS", 2)
    benchmark = make_benchmark(targets=4, candidates=6)
    step2_batch(benchmark)
    first: list[tuple[int, int, int, int]] = []

    def stale(sums: Iterable[tuple[int, int, int, int]]) -> tuple[int, int, int, int]:
        first.append(counts_summed(sums))
        return first[0]

    _assert_kept_equal_fresh(_kept_summed(benchmark, stale), benchmark)
    assert work_once(simulated("ann"), benchmark, honest()) is not None
    with pytest.raises(AssertionError):
        _assert_kept_equal_fresh(_kept_summed(benchmark, stale), benchmark)


def _import_rows_listed(benchmark: Benchmark) -> dict[str, tuple[int, int, int]]:
    """Each import's contexts, targets and candidates as the benchmark page lists them."""
    return {row.origin: (row.contexts, row.targets, row.candidates) for row in import_list(benchmark=benchmark)}


def _import_rows_counted(benchmark: Benchmark) -> dict[str, tuple[int, int, int]]:
    """Each import's contexts, targets and candidates counted from the rows."""
    from annotation.models import Import

    return {
        record.origin: (record.contexts.count(), record.targets.count(), record.candidates.count())
        for record in Import.objects.filter(benchmark=benchmark)
    }


def _imported_benchmark(tmp_path: Path) -> Benchmark:
    """A benchmark of four targets, each brought by an import of its own, with a step-2 batch."""
    benchmark = make_benchmark(targets=0)
    for number in range(1, 5):
        _import_more(benchmark, tmp_path, number)
    step2_batch(benchmark)
    return benchmark


def _recording_import_rows(monkeypatch: pytest.MonkeyPatch, lose_recounted: bool = False) -> list[list[int] | None]:
    """Record which targets each read of the import list counts again; with ``lose_recounted`` (a
    planted bug) a recount of some targets finds none of their rows."""
    computed: list[list[int] | None] = []
    real = selectors._import_rows

    def recorded(benchmark: Benchmark, target_ids: list[int] | None) -> dict[int, selectors.ImportRows]:
        computed.append(target_ids)
        if lose_recounted and target_ids is not None:
            return {}
        return real(benchmark, target_ids)

    monkeypatch.setattr(selectors, "_import_rows", recorded)
    return computed


def test_after_a_submit_the_import_list_counts_again_only_the_submitted_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kept_figures, "BUCKET_TARGETS", 2)
    benchmark = _imported_benchmark(tmp_path)
    computed = _recording_import_rows(monkeypatch)
    assert _import_rows_listed(benchmark) == _import_rows_counted(benchmark)
    assert computed == [None]
    assert all(candidates > 0 for _, _, candidates in _import_rows_counted(benchmark).values())

    assignment = work_once(simulated("ann"), benchmark, honest())
    assert assignment is not None
    assert _import_rows_listed(benchmark) == _import_rows_counted(benchmark)
    assert computed[-1] == [HIT.objects.get(pk=assignment.hit_id).target_id]

    # An import counts every target again, and the list shows its rows.
    _import_more(benchmark, tmp_path, 5)
    assert _import_rows_listed(benchmark) == _import_rows_counted(benchmark)
    assert computed[-1] is None
    assert len(_import_rows_counted(benchmark)) == 5


def test_an_import_list_that_loses_the_recounted_targets_fails_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A planted bug: a recount of the targets a submit changed finds none of their rows. The check
    above catches it after the first submit."""
    monkeypatch.setattr(kept_figures, "BUCKET_TARGETS", 2)
    benchmark = _imported_benchmark(tmp_path)
    _recording_import_rows(monkeypatch, lose_recounted=True)
    assert _import_rows_listed(benchmark) == _import_rows_counted(benchmark)
    assert work_once(simulated("ann"), benchmark, honest()) is not None
    assert _import_rows_listed(benchmark) != _import_rows_counted(benchmark)
