"""An automatic block names the targets of the blocked worker's work in the benchmark (docs/design.md
§5, §7 "Incremental figures"): the first reader after the refresh or the bot-signals run that blocked
a spammer counts those targets again, not every target, and the figures kept per target equal a
fresh count from the rows."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.utils import timezone

from annotation.models import Activity, ActivityKind, Benchmark, Worker
from hits.models import HIT, Batch
from hits.selectors.researcher import _batches_progress, _kept_batches_progress
from review.services import benchmark_refresh, benchmark_signals, review_settings_update
from tests.annotation.test_incremental_figures import Recorded, _fresh
from tests.base import Cast
from tests.review.builders import honest, make_benchmark, simulated, spammer, step2_batch, work_once
from tests.review.test_incremental_progress import _fresh as _progress_counted
from tests.review.test_incremental_progress import _kept as _progress_kept

pytestmark = pytest.mark.django_db


def _targets_of(worker: Worker, benchmark: Benchmark) -> list[int]:
    return sorted(
        set(
            HIT.objects.filter(batch__benchmark=benchmark, assignments__worker=worker).values_list(
                "target_id", flat=True
            )
        )
    )


def _assert_kept_equal_fresh(benchmark: Benchmark, recorded: Recorded) -> None:
    """The counts, the pipeline's progress and each batch's progress kept per target equal a count
    from every row."""
    assert recorded.read() == _fresh(benchmark)
    assert _progress_kept(benchmark) == _progress_counted(benchmark)
    batches = list(Batch.objects.filter(benchmark=benchmark))
    assert _kept_batches_progress(benchmark_id=benchmark.pk, batches=batches) == _batches_progress(batches=batches)


def _by_refresh(benchmark: Benchmark, cast: Cast) -> None:
    review_settings_update(benchmark=benchmark, auto_block_spammers=True, by=cast.researcher)


def _by_signals(benchmark: Benchmark, cast: Cast) -> None:
    review_settings_update(benchmark=benchmark, auto_block_signals=True, by=cast.researcher)


BLOCKERS: dict[str, Callable[[Benchmark, Cast], None]] = {"refresh": _by_refresh, "bot signals": _by_signals}


@pytest.mark.parametrize("blocker", sorted(BLOCKERS))
def test_an_automatic_block_counts_again_only_the_targets_of_the_blocked_workers_work(cast: Cast, blocker: str) -> None:
    benchmark = make_benchmark(targets=5, candidates=8)
    step2_batch(benchmark)
    BLOCKERS[blocker](benchmark, cast)
    for number in range(3):
        assert work_once(simulated(f"careful-{number}"), benchmark, honest()) is not None
    benchmark_refresh(benchmark=benchmark, touched_only=True)
    sam = simulated("sam")
    # Identical answers, far too fast, every control failed: a spammer and a bot alike.
    for _ in range(3):
        assert work_once(sam, benchmark, spammer, seconds=1.0) is not None
    spammed = _targets_of(sam, benchmark)
    assert 0 < len(spammed) < 5, "the spammer worked on some of the targets, not all"
    recorded = Recorded(benchmark)
    _assert_kept_equal_fresh(benchmark, recorded)
    computed = len(recorded.computed)

    if blocker == "refresh":
        benchmark_refresh(benchmark=benchmark, touched_only=True)
    else:
        # The submits were refreshed first, so only the block's own change is left to count.
        benchmark_refresh(benchmark=benchmark, touched_only=True)
        _assert_kept_equal_fresh(benchmark, recorded)
        computed = len(recorded.computed)
        assert benchmark_signals(benchmark=benchmark, now=timezone.now(), force=True, wait=True).blocked
        benchmark_refresh(benchmark=benchmark, touched_only=True)

    sam.refresh_from_db()
    assert sam.blocked and sam.blocked_reason.startswith("automatic:")
    assert Activity.objects.filter(benchmark=benchmark, kind=ActivityKind.BLOCKED).count() == 1
    assert not sam.assignments.filter(filtered=False).exists(), "the block filtered the spammer's work"
    _assert_kept_equal_fresh(benchmark, recorded)
    assert recorded.computed[computed:] == [spammed], "the spammer's targets alone were counted again"
