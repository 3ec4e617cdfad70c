"""The pipeline's HITs, open slots and work by status, and each batch's progress, read from the
figures kept per target and the live claims (hits.selectors.shares; docs/design.md §7, "Incremental
figures"), equal a fresh count from every HIT and assignment after any sequence of claims, submits,
returns, expiries, refreshes, exclusions, blocks, closes and reopens, for a benchmark of every
scheme; and after a submit only the submitted HIT's target is counted again."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.db.models import BooleanField, ExpressionWrapper
from django.utils import timezone

from annotation import changes as kept_figures
from annotation.models import Benchmark, Candidate, Worker
from crowds.interface import remote_backend_names
from hits.budget import budget_status
from hits.models import HIT, Assignment, AssignmentStatus, Batch, HITItem, RemoteHIT
from hits.selectors import OFFERED_HIT
from hits.selectors import shares as shares_module
from hits.selectors.researcher import _batches_progress, _kept_batches_progress
from hits.selectors.shares import shares_summed
from hits.services import (
    assignment_claim_next,
    assignment_return,
    assignment_submit,
    assignments_expire_overdue,
    batch_close,
    batch_reopen,
    candidate_exclude,
    worker_block,
)
from review.selectors import _pipeline_progress, _target_rows
from review.services import benchmark_refresh
from tests.base import Cast
from tests.scheme_benchmarks import BENCHMARK_SCHEMES, scheme_answer, scheme_benchmark

pytestmark = pytest.mark.django_db


def _fresh_pipeline(benchmark: Benchmark, steps: set[int]) -> dict[str, Any]:
    """HITs and open slots per step, open slots per target and work by status, counted from every
    HIT (its ``assignments_active`` counter) and every assignment."""
    hits: Counter[int] = Counter()
    open_slots: Counter[int] = Counter()
    by_target: Counter[int] = Counter()
    for step, target_id, required, active, offered in (
        HIT.objects.filter(batch__benchmark=benchmark)
        .annotate(offered=ExpressionWrapper(OFFERED_HIT, output_field=BooleanField()))
        .values_list("batch__step", "target_id", "assignments_required", "assignments_active", "offered")
    ):
        if step not in steps:
            continue
        free = max(0, required - active) if offered else 0
        hits[step] += 1
        open_slots[step] += free
        by_target[target_id] += free
    work = Assignment.objects.filter(hit__batch__benchmark=benchmark)
    statuses = Counter(work.values_list("status", flat=True))
    return {
        "steps": {step: (hits[step], open_slots[step]) for step in sorted(steps)},
        "targets": {target_id: free for target_id, free in by_target.items() if free},
        "assignments": {
            **{status: statuses.get(status, 0) for status in AssignmentStatus.values},
            "filtered": work.filter(filtered=True).count(),
        },
    }


def _kept_pipeline(benchmark: Benchmark) -> tuple[dict[str, Any], set[int]]:
    progress = _pipeline_progress(benchmark=benchmark, with_targets=True)
    return {
        "steps": {step.step: (step.hits, step.open_slots) for step in progress.steps},
        "targets": {target.target_id: target.open_slots for target in progress.targets if target.open_slots},
        "assignments": progress.assignments,
    }, {step.step for step in progress.steps}


def _assert_kept_equal_fresh(benchmark: Benchmark, counted: Any = None) -> None:
    kept, steps = _kept_pipeline(benchmark)
    assert kept == _fresh_pipeline(benchmark, steps)
    # The shares kept in buckets and their sums by batch kept beside them, against a count now.
    fresh = (counted or shares_module._target_shares)(benchmark.pk, None)
    shares = shares_module.target_shares(benchmark_id=benchmark.pk)
    assert shares.all() == fresh
    assert shares.total == shares_summed(fresh.values())
    # The pipeline page's rows, built a chunk at a time from its targets' buckets alone.
    summary = _pipeline_progress(benchmark=benchmark, with_targets=False)
    rows = [row for start in range(0, summary.targets_total, 2) for row in _target_rows(summary, start, start + 2)]
    assert rows == list(_pipeline_progress(benchmark=benchmark, with_targets=True).targets)
    batches = list(Batch.objects.filter(benchmark=benchmark).order_by("pk"))
    assert _kept_batches_progress(benchmark_id=benchmark.pk, batches=batches) == _batches_progress(batches=batches)


class _RandomChanges:
    """Random claims, submits, returns, expiries, closes, reopens and exclusions on a benchmark of one
    scheme, as its crowd and its researcher make them (shared by the property tests below)."""

    def __init__(self, cast: Cast, scheme_name: str, seed: str) -> None:
        self.cast, self.scheme_name = cast, scheme_name
        self.rng = random.Random(seed)
        sentences = tuple(f"The cat sat on mat number {index} all afternoon." for index in range(6))
        self.benchmark, self.first = scheme_benchmark(
            scheme_name, cast, sentences=sentences, candidates=("perched", "rested", "squatted", "lounged")
        )
        self.workers = [Worker.objects.get(user=user) for user in (cast.alice, cast.bob, cast.carol)]
        self.held: list[Assignment] = []

    def claim(self) -> None:
        assignment = assignment_claim_next(worker=self.rng.choice(self.workers), benchmark=self.benchmark)
        if assignment is not None:
            self.held.append(assignment)

    def submit(self) -> None:
        if not self.held:
            self.claim()
        if self.held:
            assignment = self.held.pop(self.rng.randrange(len(self.held)))
            if Assignment.objects.get(pk=assignment.pk).status != AssignmentStatus.CLAIMED:
                return
            items = HITItem.objects.filter(hit_id=assignment.hit_id)
            answers = {item.pk: scheme_answer(self.scheme_name, item) for item in items}
            assignment_submit(assignment=assignment, answers=answers)

    def give_back(self) -> None:
        if self.held:
            assignment_return(assignment=self.held.pop(self.rng.randrange(len(self.held))))

    def expire(self) -> None:
        if self.held:
            assignment = self.held.pop(self.rng.randrange(len(self.held)))
            Assignment.objects.filter(pk=assignment.pk).update(deadline=timezone.now() - timedelta(seconds=1))
            assignments_expire_overdue()

    def close_or_reopen(self) -> None:
        batch = Batch.objects.get(pk=self.first.pk)
        if batch.status == "closed":
            batch_reopen(batch=batch, by=self.cast.researcher)
        else:
            batch_close(batch=batch, by=self.cast.researcher)

    def exclude(self) -> None:
        candidates = list(Candidate.objects.filter(target__benchmark=self.benchmark).exclude(stage="excluded"))
        if candidates:
            candidate_exclude(candidate=self.rng.choice(candidates), by=self.cast.researcher)

    def refresh_touched(self) -> None:
        benchmark_refresh(benchmark=self.benchmark, touched_only=True)

    def refresh_all(self) -> None:
        benchmark_refresh(benchmark=self.benchmark, full=True)

    def block(self) -> None:
        worker_block(worker=self.rng.choice(self.workers[1:]), reason="test", by=self.cast.researcher)

    def every_change(self) -> list[tuple[Callable[[], None], int]]:
        """Each change above with its weight: a crowd at work, refreshes that filter it, a
        researcher closing, reopening, excluding and blocking."""
        return [
            (self.claim, 4),
            (self.submit, 8),
            (self.give_back, 2),
            (self.expire, 2),
            (self.refresh_touched, 3),
            (self.refresh_all, 1),
            (self.close_or_reopen, 1),
            (self.exclude, 1),
            (self.block, 1),
        ]

    def run(self, changes: list[tuple[Callable[[], None], int]], check: Callable[[], None], times: int = 30) -> None:
        """``times`` changes drawn by weight, each followed by ``check``."""
        actions = [action for action, weight in changes for _ in range(weight)]
        for _ in range(times):
            self.rng.choice(actions)()
            check()


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_after_any_sequence_of_changes_the_kept_figures_equal_a_fresh_count(
    cast: Cast, scheme_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    computed: list[list[int] | None] = []
    counted = shares_module._target_shares

    def recording(benchmark_id: int, target_ids: list[int] | None) -> Any:
        computed.append(target_ids)
        return counted(benchmark_id, target_ids)

    monkeypatch.setattr(shares_module, "_target_shares", recording)
    # Buckets of two targets: the benchmark's targets sit in several, as at full size.
    monkeypatch.setattr(kept_figures, "BUCKET_TARGETS", 2)
    world = _RandomChanges(cast, scheme_name, scheme_name)
    benchmark = world.benchmark
    _assert_kept_equal_fresh(benchmark)
    world.run(world.every_change(), lambda: _assert_kept_equal_fresh(benchmark, counted))
    assert any(target_ids for target_ids in computed), "some reads counted only the targets changed"
    assert Assignment.objects.filter(hit__batch__benchmark=benchmark).exclude(status="claimed").exists()


def test_after_a_submit_only_its_target_is_counted_again(cast: Cast, monkeypatch: pytest.MonkeyPatch) -> None:
    computed: list[list[int] | None] = []
    counted = shares_module._target_shares

    def recording(benchmark_id: int, target_ids: list[int] | None) -> Any:
        computed.append(target_ids)
        return counted(benchmark_id, target_ids)

    monkeypatch.setattr(shares_module, "_target_shares", recording)
    sentences = tuple(f"The cat sat on mat number {index} all afternoon." for index in range(4))
    benchmark, _ = scheme_benchmark("swords", cast, sentences=sentences)
    shares_module.target_shares(benchmark_id=benchmark.pk)
    assert computed == [None]
    worker = Worker.objects.get(user=cast.bob)
    assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
    assert assignment is not None
    shares_module.target_shares(benchmark_id=benchmark.pk)
    assert computed == [None], "a claim counts nothing again: live claims are read apart"
    items = HITItem.objects.filter(hit_id=assignment.hit_id)
    assignment_submit(assignment=assignment, answers={item.pk: scheme_answer("swords", item) for item in items})
    shares_module.target_shares(benchmark_id=benchmark.pk)
    assert computed[-1] == [HIT.objects.get(pk=assignment.hit_id).target_id]


def test_sums_by_batch_not_brought_up_to_date_fail_the_check(cast: Cast, monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted bug: the shares' sums by batch leave out the HITs of the last bucket summed. The
    check of the test above catches it."""
    monkeypatch.setattr(kept_figures, "BUCKET_TARGETS", 2)
    summed = shares_module.shares_summed

    def planted(shares: Any) -> Any:
        listed = list(shares)
        return summed(listed[:-1] if len(listed) > 1 else listed)

    monkeypatch.setattr(shares_module, "shares_summed", planted)
    sentences = tuple(f"The cat sat on mat number {index} all afternoon." for index in range(6))
    benchmark, _ = scheme_benchmark("swords", cast, sentences=sentences)
    with pytest.raises(AssertionError):
        _assert_kept_equal_fresh(benchmark)


def _assert_budget_kept_equal_fresh(benchmark: Benchmark) -> None:
    """The budget block as the pages show it (free slots from the kept shares less live claims)
    against the figure read from every offered HIT's counter."""
    kept = budget_status(benchmark=benchmark, kept=True)
    assert kept == budget_status(benchmark=benchmark)


# The crowds the budget prices: the local queue and each crowd that pays (``CrowdBackend.remote``).
BUDGET_BACKENDS = ("local", *sorted(remote_backend_names()))


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_after_any_sequence_of_changes_the_budgets_kept_free_slots_equal_a_fresh_count(
    cast: Cast, scheme_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kept_figures, "BUCKET_TARGETS", 2)
    world = _RandomChanges(cast, scheme_name, f"budget-{scheme_name}")
    benchmark, first, rng = world.benchmark, world.first, world.rng
    # Priced, so every free slot moves the figure.
    Batch.objects.filter(benchmark=benchmark).update(reward=Decimal("0.37"))
    _assert_budget_kept_equal_fresh(benchmark)

    def refresh() -> None:
        benchmark_refresh(benchmark=benchmark, touched_only=rng.random() < 0.7, full=rng.random() < 0.3)

    def move_crowd() -> None:
        # The batch's crowd as a publish or a crowd's sync leaves it: the change moves the key.
        Batch.objects.filter(pk=first.pk).update(backend=rng.choice(BUDGET_BACKENDS))
        kept_figures.benchmark_changed(benchmark_id=benchmark.pk)

    def post() -> None:
        # Some HITs posted on the crowd (a publish records its activity, which moves the key).
        for hit in HIT.objects.filter(batch__benchmark=benchmark, remote_hits__isnull=True).order_by("pk")[:2]:
            RemoteHIT.objects.create(hit=hit, round=0, external_id=f"posted-{hit.pk}", max_assignments=1)
        kept_figures.benchmark_changed(benchmark_id=benchmark.pk)

    changes: list[tuple[Callable[[], None], int]] = [
        (world.claim, 5),
        (world.submit, 8),
        (world.give_back, 2),
        (world.expire, 2),
        (refresh, 3),
        (world.close_or_reopen, 1),
        (move_crowd, 2),
        (post, 1),
        (world.exclude, 1),
    ]
    committed = set()

    def check() -> None:
        _assert_budget_kept_equal_fresh(benchmark)
        committed.add(budget_status(benchmark=benchmark).committed)

    world.run(changes, check)
    assert len(committed) > 2, "the sequence moved the committed money"


def test_a_stale_total_of_free_slots_fails_the_budgets_check(cast: Cast, monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted bug: the kept sums by batch leave out the last bucket summed, as a total not brought
    up to date would. The check of the test above catches it."""
    monkeypatch.setattr(kept_figures, "BUCKET_TARGETS", 2)
    summed = shares_module.shares_summed

    def planted(shares: Any) -> Any:
        listed = list(shares)
        return summed(listed[:-1] if len(listed) > 1 else listed)

    monkeypatch.setattr(shares_module, "shares_summed", planted)
    sentences = tuple(f"The cat sat on mat number {index} all afternoon." for index in range(6))
    benchmark, _ = scheme_benchmark("swords", cast, sentences=sentences)
    Batch.objects.filter(benchmark=benchmark).update(reward=Decimal("0.37"))
    with pytest.raises(AssertionError):
        _assert_budget_kept_equal_fresh(benchmark)
