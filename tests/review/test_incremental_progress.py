"""The pipeline's progress kept per target (review.selectors, docs/design.md §7 "Incremental figures"):
for every scheme, after any sequence of submits, refreshes and exclusions, the progress summed from
the kept targets equals the scheme's progress counted from every row, target by target and in
every total."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from django.core.cache import cache
from django.utils import timezone

from annotation import changes
from annotation.models import Benchmark, Candidate, Target
from hits.models import HITItem
from hits.selectors.shares import _target_shares, live_claims
from hits.services import assignment_claim_next, assignment_submit, candidate_exclude
from review.selectors import TARGET_ROWS_CHUNK, _scheme_progress, collected_work, pipeline_progress
from review.services import benchmark_refresh
from schemes import get_scheme
from schemes.progress import SchemeProgress
from schemes.swords.settings import SwordsSettings
from tests.base import Cast
from tests.review.builders import simulated
from tests.scheme_benchmarks import BENCHMARK_SCHEMES, scheme_answer, scheme_benchmark

pytestmark = pytest.mark.django_db

SENTENCES = tuple(f"The cat sat on mat number {number} all afternoon." for number in range(5))
CURTAIL = {**SwordsSettings().to_json(), "stopping_policy": "curtail"}
CASES = [(name, None) for name in BENCHMARK_SCHEMES] + [("swords", CURTAIL)]


def _kept(benchmark: Benchmark) -> SchemeProgress:
    """The progress from the sums kept beside the targets' figures, with every target's kept row."""
    progress, kept = _scheme_progress(benchmark=benchmark, scheme=get_scheme(benchmark))
    if kept is None:
        return progress
    rows = kept.all()
    assert rows == kept.of(rows), "a target's row reads the same from its bucket alone"
    return dataclasses.replace(progress, targets=rows)


def _fresh(benchmark: Benchmark) -> SchemeProgress:
    scheme = get_scheme(benchmark)
    return scheme.progress(
        benchmark=benchmark, settings=scheme.settings(benchmark), work=collected_work(benchmark=benchmark)
    )


def _rows_shown(benchmark: Benchmark) -> list[tuple[Any, ...]]:
    """The pipeline page's target table as the page reads it: a chunk at a time, from the figures kept."""
    return [
        (
            row.target_id,
            row.stage,
            row.candidates,
            row.counts,
            [(s.step, s.collected, s.needed) for s in row.steps],
            row.open_slots,
        )
        for row in pipeline_progress(benchmark=benchmark).targets
    ]


def _rows_counted(benchmark: Benchmark) -> list[tuple[Any, ...]]:
    """The same table counted from every row now: the scheme's progress, each target's HITs and work, the claims."""
    progress = _fresh(benchmark)
    steps = [step.step for step in progress.steps]
    shares = _target_shares(benchmark.pk, None)
    held = live_claims(benchmark_id=benchmark.pk, now=timezone.now()).holding
    rows: list[tuple[Any, ...]] = []
    for target_id, stage in Target.objects.filter(benchmark=benchmark).order_by("pk").values_list("pk", "stage"):
        count = progress.targets.get(target_id)
        free = sum(share.free for share in shares.get(target_id, {}).values() if share.step in steps)
        free -= sum(number for (step, target), number in held.items() if target == target_id and step in steps)
        if count is None:
            rows.append((target_id, stage, 0, {}, [], free))
            continue
        cells = [(step, *(count.steps.get(step) or (None, None))) for step in steps]
        counts = {name: count.counts.get(name, 0) for name in progress.target_columns}
        rows.append((target_id, stage, count.candidates, counts, cells, free))
    return rows


@pytest.mark.parametrize(("scheme_name", "settings"), CASES, ids=[f"{name}-{bool(s)}" for name, s in CASES])
def test_the_kept_progress_equals_the_progress_counted_from_every_row(
    cast: Cast, scheme_name: str, settings: dict[str, Any] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Buckets of two targets: the benchmark's targets sit in several, as at full size.
    monkeypatch.setattr(changes, "BUCKET_TARGETS", 2)
    benchmark, _ = scheme_benchmark(scheme_name, cast, sentences=SENTENCES, settings=settings)
    scheme = get_scheme(benchmark)
    by_target = scheme.progress_by_target(scheme.settings(benchmark))
    assert by_target == (scheme_name != "prolex")
    rng = random.Random(scheme_name)
    workers = [simulated(f"{scheme_name}-{number}") for number in range(3)]
    assert _kept(benchmark) == _fresh(benchmark)
    submitted = 0
    for _ in range(12):
        action = rng.choice(["submit", "submit", "submit", "refresh", "refresh all", "exclude"])
        if action == "submit":
            assignment = assignment_claim_next(worker=rng.choice(workers), benchmark=benchmark)
            if assignment is not None:
                items = HITItem.objects.filter(hit_id=assignment.hit_id)
                answers = {item.pk: scheme_answer(scheme_name, item) for item in items}
                assignment_submit(assignment=assignment, answers=answers)
                submitted += 1
        elif action == "refresh":
            benchmark_refresh(benchmark=benchmark, touched_only=True)
        elif action == "refresh all":
            benchmark_refresh(benchmark=benchmark, full=True)
        else:
            candidate = Candidate.objects.filter(target__benchmark=benchmark).exclude(stage="excluded").first()
            if candidate is not None:
                candidate_exclude(candidate=candidate, by=cast.researcher)
        assert _kept(benchmark) == _fresh(benchmark), action
        assert _rows_shown(benchmark) == _rows_counted(benchmark), action
    if scheme_name != "prolex":
        # ProLex's work goes to the experts named; the others' crowd submitted.
        assert submitted > 0


def test_the_pipeline_rows_of_a_scheme_counted_from_every_row_come_from_the_summarys_count(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    benchmark, _ = scheme_benchmark("prolex", cast, sentences=SENTENCES)
    scheme = get_scheme(benchmark)
    assert not scheme.progress_by_target(scheme.settings(benchmark))
    counted: list[object] = []
    progress = type(scheme).progress

    def counting(self: Any, **arguments: Any) -> SchemeProgress:
        counted.append(arguments.get("target_ids"))
        return progress(self, **arguments)

    monkeypatch.setattr(type(scheme), "progress", counting)
    cache.clear()
    rows = pipeline_progress(benchmark=benchmark).targets[:TARGET_ROWS_CHUNK]
    assert [row.target_id for row in rows] == list(
        Target.objects.filter(benchmark=benchmark).order_by("pk").values_list("pk", flat=True)
    )
    assert counted == [None], "one count of every row gives the summary and the rows"
