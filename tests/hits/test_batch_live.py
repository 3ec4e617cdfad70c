"""A batch's page and its live poll, read from the progress of every batch kept per change of the
benchmark (hits.selectors.researcher.benchmark_batches_progress) and warmed after a change
(hits/warmers.py), with the work in flight and the throughput read live in one statement
(hits.selectors.operations.batch_live), show what a fresh count from every HIT and assignment shows,
after any sequence of claims, submits, returns, claims past their deadline, expiries, work ageing
through the throughput window, closes and reopens, crowd moves and refreshes, for a benchmark of
every scheme."""

from __future__ import annotations

import contextlib
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.core.cache import cache
from django.db.models import F
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation import changes as kept_figures
from annotation.models import Benchmark
from hits import warmers
from hits.models import SUBMITTED_STATUSES, Assignment, AssignmentStatus, Batch
from hits.selectors import operations as operations_selectors
from hits.selectors import researcher as researcher_selectors
from hits.services import BatchStateError, HitsGenerationError, assignment_claim_next, batch_clone
from hits.services.queue import SubmissionRefused
from review.services import benchmark_refresh
from tests.base import Cast
from tests.hits.test_kept_shares import BUDGET_BACKENDS, _RandomChanges
from tests.scheme_benchmarks import BENCHMARK_SCHEMES

pytestmark = pytest.mark.django_db

# The page's forms carry a CSRF token masked anew at each answer.
_TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"')


def _shown(client: Client, batch: Batch) -> tuple[Any, str]:
    live = client.get(reverse("batch-live", args=[batch.pk]))
    page = client.get(reverse("batch-detail", args=[batch.pk]))
    assert live.status_code == page.status_code == 200
    return live.json(), _TOKEN.sub("", page.content.decode())


def _fresh(benchmark_id: int) -> dict[int, researcher_selectors.BatchProgress]:
    """Every batch's progress counted now from every HIT and assignment."""
    return researcher_selectors._batches_progress(batches=list(Batch.objects.filter(benchmark_id=benchmark_id)))


def _fresh_live(
    ids: list[int], *, now: datetime, hours: int, claims: bool, seen: Counter[str]
) -> tuple[dict[int, list[int]], Counter[int]]:
    """Each batch's submissions of the window by hours ago and its claims before their deadline,
    counted in Python from every assignment of the batches; ``seen`` tallies the cases met."""
    per_hour: dict[int, list[int]] = defaultdict(lambda: [0] * hours)
    in_flight: Counter[int] = Counter()
    for batch_id, status, deadline, submitted_at in Assignment.objects.filter(hit__batch_id__in=ids).values_list(
        "hit__batch_id", "status", "deadline", "submitted_at"
    ):
        if status == AssignmentStatus.CLAIMED:
            seen["claimed before the deadline" if deadline > now else "claimed past the deadline"] += 1
            in_flight[batch_id] += claims and deadline > now
        elif status in SUBMITTED_STATUSES and submitted_at is not None:
            age = now - submitted_at
            if timedelta(0) <= age < timedelta(hours=hours):
                hour = int(age / timedelta(hours=1))
                seen["handed in the last hour" if hour == 0 else "handed in earlier in the window"] += 1
                per_hour[batch_id][hour] += 1
            else:
                seen["handed in before the window"] += 1
    return per_hour, in_flight


def _assert_shown_equal_fresh(
    client: Client, benchmark: Benchmark, monkeypatch: pytest.MonkeyPatch, seen: Counter[str] | None = None
) -> None:
    batches = list(Batch.objects.filter(benchmark=benchmark).order_by("pk"))
    kept = [_shown(client, batch) for batch in batches]
    tally = Counter[str]() if seen is None else seen

    def counted_live(ids: list[int], *, now: datetime, hours: int, claims: bool) -> Any:
        return _fresh_live(ids, now=now, hours=hours, claims=claims, seen=tally)

    with monkeypatch.context() as fresh:
        fresh.setattr(researcher_selectors, "benchmark_batches_progress", _fresh)
        fresh.setattr(operations_selectors, "_handed_in_and_claimed", counted_live)
        counted = [_shown(client, batch) for batch in batches]
    for batch, (kept_live, kept_page), (fresh_live, fresh_page) in zip(batches, kept, counted, strict=True):
        differing = {
            name: (kept_live[part].get(name), fresh_live[part].get(name))
            for part in ("figures", "bars")
            for name in {*kept_live[part], *fresh_live[part]}
            if kept_live[part].get(name) != fresh_live[part].get(name)
        }
        assert differing == {}, f"the poll of batch {batch.pk}: (kept, fresh) figures"
        assert kept_page == fresh_page, f"the page of batch {batch.pk}"


def _run_changes(cast: Cast, scheme_name: str, monkeypatch: pytest.MonkeyPatch, *, times: int = 24) -> None:
    monkeypatch.setattr(kept_figures, "BUCKET_TARGETS", 2)
    world = _RandomChanges(cast, scheme_name, f"live-{scheme_name}")
    benchmark, first, rng = world.benchmark, world.first, world.rng
    # Priced, so the costs move with the work; a second batch, so one batch's figures are told from another's.
    Batch.objects.filter(benchmark=benchmark).update(reward=Decimal("0.37"))
    target = first.hits.order_by("pk").values_list("target_id", flat=True)[0]
    # A scheme whose step takes a target once keeps its one batch.
    with contextlib.suppress(HitsGenerationError):
        batch_clone(batch=first, targets=[target], force=True, created_by=cast.researcher)
    client = Client()
    client.force_login(cast.researcher)

    def refresh() -> None:
        benchmark_refresh(benchmark=benchmark, touched_only=rng.random() < 0.7, full=rng.random() < 0.3)

    def move_crowd() -> None:
        # The batch's crowd as a publish or a crowd's sync leaves it: the change moves the key.
        Batch.objects.filter(pk=first.pk).update(backend=rng.choice(BUDGET_BACKENDS))
        kept_figures.benchmark_changed(benchmark_id=benchmark.pk)

    def close_or_reopen() -> None:
        # A batch whose candidates the clone holds stays closed: the reopen is refused, nothing changes.
        with contextlib.suppress(BatchStateError):
            world.close_or_reopen()

    def give_back() -> None:
        # Work the crowd handed in meanwhile is not returned: the return is refused, nothing changes.
        with contextlib.suppress(SubmissionRefused):
            world.give_back()

    def lapse() -> None:
        # A claim past its deadline that no expiry has ended yet: still claimed, no longer in flight;
        # beside it a claim of another annotator (the queue offers a scheme's work to some only).
        for worker in rng.sample(world.workers, len(world.workers)):
            assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
            if assignment is not None:
                world.held.append(assignment)
        if world.held:
            assignment = world.held.pop(rng.randrange(len(world.held)))
            Assignment.objects.filter(pk=assignment.pk).update(deadline=timezone.now() - timedelta(seconds=1))

    def age() -> None:
        # Work handed in earlier: it moves through the throughput window and out of it as time passes.
        handed_in = list(
            Assignment.objects.filter(hit__batch__benchmark=benchmark, status__in=SUBMITTED_STATUSES).values_list(
                "pk", flat=True
            )
        )
        if handed_in:
            earlier = timedelta(minutes=rng.randrange(18 * 60))
            Assignment.objects.filter(pk=rng.choice(handed_in)).update(
                claimed_at=F("claimed_at") - earlier, submitted_at=F("submitted_at") - earlier
            )

    def warm() -> None:
        # The task a change queues, run before the next reader: the readers find what it computed.
        cache.clear()
        kept_figures.benchmark_changed(benchmark_id=benchmark.pk)
        warmers.batches_warm(benchmark)

    changes: list[tuple[Callable[[], None], int]] = [
        (world.claim, 5),
        (world.submit, 8),
        (give_back, 2),
        (world.expire, 2),
        (lapse, 2),
        (age, 3),
        (refresh, 3),
        (close_or_reopen, 1),
        (move_crowd, 1),
        (warm, 2),
    ]
    world.run(changes, lambda: _assert_shown_equal_fresh(client, benchmark, monkeypatch), times=times)


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_after_any_sequence_of_changes_the_batch_page_and_poll_equal_a_fresh_count(
    cast: Cast, scheme_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _run_changes(cast, scheme_name, monkeypatch)


def test_the_poll_counts_claims_before_their_deadline_and_work_by_the_hour_it_came_in(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every case of the live statement built: claims before and past their deadline, work handed in
    during the last hour, earlier in the window and before it; the poll shows what a fresh count shows."""
    world = _RandomChanges(cast, "swords", "cases")
    benchmark, batch = world.benchmark, world.first
    for _ in range(4):
        world.submit()
    claims = [assignment_claim_next(worker=worker, benchmark=benchmark) for worker in world.workers]
    held = [claim.pk for claim in claims if claim is not None]
    assert len(set(held)) == 3, "each annotator holds a claim"
    Assignment.objects.filter(pk=held[0]).update(deadline=timezone.now() - timedelta(seconds=1))
    handed_in = list(Assignment.objects.filter(hit__batch=batch, status__in=SUBMITTED_STATUSES).order_by("pk"))
    assert len(handed_in) == 5
    for assignment, earlier in zip(handed_in, (timedelta(hours=2, minutes=5), timedelta(hours=13)), strict=False):
        Assignment.objects.filter(pk=assignment.pk).update(
            claimed_at=F("claimed_at") - earlier, submitted_at=F("submitted_at") - earlier
        )
    client = Client()
    client.force_login(cast.researcher)
    seen: Counter[str] = Counter()
    _assert_shown_equal_fresh(client, benchmark, monkeypatch, seen)
    assert set(seen) == {
        "claimed before the deadline",
        "claimed past the deadline",
        "handed in the last hour",
        "handed in earlier in the window",
        "handed in before the window",
    }
    figures = client.get(reverse("batch-live", args=[batch.pk])).json()["figures"]
    assert (figures["batch.in_flight"], figures["batch.last_hour"]) == ("2", "3")


def test_a_live_statement_without_the_claims_fails_the_check(cast: Cast, monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted bug: the poll's one live statement reads the window's submissions and not the
    claims, so no work shows in flight. The check of the test above catches it."""
    counted = operations_selectors._handed_in_and_claimed

    def planted(ids: list[int], *, now: datetime, hours: int, claims: bool) -> Any:
        return counted(ids, now=now, hours=hours, claims=False)

    monkeypatch.setattr(operations_selectors, "_handed_in_and_claimed", planted)
    with pytest.raises(AssertionError):
        _run_changes(cast, "swords", monkeypatch)


def test_figures_kept_past_a_change_fail_the_check(cast: Cast, monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted bug: the batches' progress kept under a name alone, not the benchmark's change key,
    so it is never counted again. The check of the test above catches it."""
    kept: dict[int, Any] = {}
    counted = researcher_selectors.benchmark_batches_progress

    def planted(*, benchmark_id: int) -> Any:
        if benchmark_id not in kept:
            kept[benchmark_id] = counted(benchmark_id=benchmark_id)
        return kept[benchmark_id]

    monkeypatch.setattr(researcher_selectors, "benchmark_batches_progress", planted)
    with pytest.raises(AssertionError):
        _run_changes(cast, "swords", monkeypatch)


def test_the_warm_after_a_change_fills_what_the_batch_page_and_poll_read(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = _RandomChanges(cast, "swords", "warm")
    benchmark = world.benchmark
    # Two batches: the benchmark page shows both, each batch's page one.
    target = world.first.hits.order_by("pk").values_list("target_id", flat=True)[0]
    batch_clone(batch=world.first, targets=[target], force=True, created_by=cast.researcher)
    for _ in range(3):
        world.submit()
    kept_figures.benchmark_changed(benchmark_id=benchmark.pk)
    warmers.batches_warm(benchmark)
    computed: list[int] = []
    counted = researcher_selectors._kept_batches_progress

    def recording(*, benchmark_id: int, batches: list[Batch]) -> Any:
        computed.append(benchmark_id)
        return counted(benchmark_id=benchmark_id, batches=batches)

    monkeypatch.setattr(researcher_selectors, "_kept_batches_progress", recording)
    client = Client()
    client.force_login(cast.researcher)
    batches = list(Batch.objects.filter(benchmark=benchmark))
    assert len(batches) == 2
    for batch in batches:
        _shown(client, batch)
    assert computed == [], "the batch's page and poll read the warmed figures"
