"""A publish reserves its cost under the budget cap before calling its crowd (docs/design.md §16): two
publishes at once on PostgreSQL are checked one after the other, so when the cap allows one exactly
one passes; a failed crowd call gives its reservation back; one left by a run that died lapses."""

from __future__ import annotations

import threading
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.utils import timezone

from annotation.models import Benchmark
from crowds.services import CrowdActionRefused, batch_publish
from hits.budget import BudgetExceeded, budget_check, budget_release, budget_reserve, budget_status
from hits.models import HIT, Batch, BudgetReservation, CrowdLimits
from tests.crowds.crowd_helpers import make_batch, stubbed_mturk
from tests.crowds.prolific_fake import FakeProlific, fake_prolific
from tests.hits.test_queue_concurrency import run_in_threads

SITE = "https://crowdlex.example.org"


def _cap(benchmark: Benchmark, amount: Decimal | None) -> None:
    CrowdLimits.objects.update_or_create(benchmark=benchmark, defaults={"budget_cap": amount})


def _split(batch: Batch) -> Batch:
    """A second batch of the same benchmark, crowd and price, taking half of ``batch``'s HITs."""
    second = Batch.objects.create(
        benchmark=batch.benchmark,
        step=batch.step,
        backend=batch.backend,
        assignments_per_hit=batch.assignments_per_hit,
        reward=batch.reward,
    )
    hits = list(batch.hits.order_by("id").values_list("pk", flat=True))
    HIT.objects.filter(pk__in=hits[len(hits) // 2 :]).update(batch=second)
    return second


@pytest.fixture
def fake(settings: Any) -> Any:
    settings.SITE_URL = SITE
    with fake_prolific(settings) as running:
        yield running


@pytest.mark.django_db(transaction=True)
@pytest.mark.production_database("two connections at once need PostgreSQL")
def test_two_publishes_at_once_cannot_both_pass_a_cap_that_allows_one(fake: FakeProlific, settings: Any) -> None:
    first = make_batch(name="racing", backend="prolific", hits=4, assignments=2, reward="0.20")
    second = _split(first)
    fee = (Decimal("0.20") * settings.PROLIFIC_SERVICE_FEE_RATE).quantize(Decimal("0.01"))
    one = 4 * (Decimal("0.20") + fee)
    _cap(first.benchmark, one + one - Decimal("0.01"))

    # The first publish to reach the crowd is kept there until the other publish is over, so the two
    # overlap: checked apart from what they commit, both would pass.
    other_over = threading.Event()
    answer = fake.handle

    def held(method: str, path: str, query: dict[str, list[str]], body: Any) -> tuple[int, Any]:
        if method == "POST" and path == "/api/v1/studies/":
            other_over.wait(timeout=15)
        return answer(method, path, query, body)

    fake.handle = held  # type: ignore[method-assign]
    batches = [first, second]

    def publish(index: int) -> str:
        try:
            batch_publish(batch=batches[index], options={"estimated_minutes": 1})
            return "published"
        except CrowdActionRefused as refused:
            return str(refused)
        finally:
            other_over.set()

    outcomes = run_in_threads(publish, 2)
    assert sorted(outcome == "published" for outcome in outcomes) == [False, True]
    refusal = next(outcome for outcome in outcomes if outcome != "published")
    assert f"would cost ${one}, but only ${one - Decimal('0.01')} remains" in refusal
    assert len(fake.studies) == 1
    assert not BudgetReservation.objects.exists()
    status = budget_status(benchmark=first.benchmark)
    assert (status.committed, status.remaining) == (one, one - Decimal("0.01"))


@pytest.mark.django_db
def test_a_failed_crowd_call_gives_its_reservation_back(monkeypatch: Any, settings: Any) -> None:
    settings.SITE_URL = SITE
    batch = make_batch(hits=2, assignments=3, reward="0.10")
    # Six assignments at $0.10 and MTurk's $0.02 fee each: exactly the cap.
    _cap(batch.benchmark, Decimal("0.72"))
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("get_account_balance", {"AvailableBalance": "0.00"}, {})
        with pytest.raises(Exception, match="add funds"):
            batch_publish(batch=batch, options={"sandbox": True})
    assert not BudgetReservation.objects.exists()
    status = budget_status(benchmark=batch.benchmark)
    assert (status.committed, status.remaining) == (Decimal("0.00"), Decimal("0.72"))
    budget_check(benchmark=batch.benchmark, cost=Decimal("0.72"), what="the same publish again")


@pytest.mark.django_db
def test_a_reservation_counts_as_committed_until_released_or_lapsed(settings: Any) -> None:
    settings.BUDGET_RESERVATION_HOURS = 6
    batch = make_batch(hits=1, assignments=1, reward="0.10")
    benchmark = batch.benchmark
    _cap(benchmark, Decimal("1.00"))
    reservation = budget_reserve(benchmark=benchmark, cost=Decimal("0.60"), what="publishing", batch=batch)
    assert reservation is not None
    assert budget_status(benchmark=benchmark).committed == Decimal("0.60")
    with pytest.raises(BudgetExceeded, match=r"would cost \$0\.50, but only \$0\.40 remains"):
        budget_reserve(benchmark=benchmark, cost=Decimal("0.50"), what="another publish")
    assert BudgetReservation.objects.count() == 1
    # Left by a run that died: it stops counting after BUDGET_RESERVATION_HOURS.
    BudgetReservation.objects.filter(pk=reservation.pk).update(created_at=timezone.now() - timedelta(hours=7))
    assert budget_status(benchmark=benchmark).committed == Decimal("0.00")
    budget_release(reservation=reservation)
    assert not BudgetReservation.objects.exists()
    # Without a cap nothing is set aside.
    _cap(benchmark, None)
    assert budget_reserve(benchmark=benchmark, cost=Decimal("5.00"), what="anything") is None
