"""A benchmark's budget cap and its burn-down (docs/design.md §16).

What work costs is what its crowd's price says (``CrowdBackend.fees`` and the batch's reward, the
rule ``price`` applies: the reward and the crowd's fee on it for a HIT of that size; a bonus and
its fee). On the local queue the platform pays no one and takes no fee: local work counts at its
batch's reward, which the lab pays itself, so a local batch with no reward costs nothing.

- **Spent**: paid work. On a crowd, approved assignments and bonuses sent; on the local queue,
  submitted work that was not rejected (the platform's own record is the payment's).
- **Committed**: published and not yet paid. Submitted work still to be decided (on a crowd;
  work the crowd does not know is never paid, so it is left out), pending bonuses, and every free
  slot of a HIT still offered (its batch open, its target not done) that its crowd has been given:
  on the local queue any open batch, on a crowd the HITs posted there.
- **Remaining**: the cap less spent and committed.

``budget_check`` refuses what would take spent and committed past the cap: publishing a batch,
the pipeline's follow-up HITs, re-collection and bonuses. Approving, rejecting and paying work
already submitted never pass through it: a worker who did the work is paid whatever the cap.

A publish calls its crowd between the check and the moment what it posted counts as committed, and
no transaction is held open across that call. So ``budget_reserve`` checks and writes a
``BudgetReservation`` of the cost in one transaction under the benchmark's lock (a transaction-level
advisory lock, ``crowdlex.dialect``, which ``budget_check`` also takes inside a transaction), and the
reservation counts as committed until ``budget_release`` deletes it after the call, succeeded or
failed. Two publishes at once are thus checked one after the other, the second against the first's
reservation: when the cap allows one, one passes.

The benchmark page shows the block from the benchmark's cached figures (``budget_status_shown``,
docs/design.md §7 "Researcher pages"): computed once per change of the benchmark and day; what a
claim commits shows within ``BENCHMARK_FIGURES_MAX_AGE_SECONDS``. The check reads the data itself.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from annotation.changes import benchmark_cached
from annotation.models import Benchmark, TargetStage
from crowdlex.dialect import dialect
from crowdlex.statements import shaped_rows
from hits.models import (
    HIT,
    Assignment,
    AssignmentStatus,
    Batch,
    BatchStatus,
    Bonus,
    BonusStatus,
    BudgetReservation,
    CrowdLimits,
    RemoteHIT,
)

if TYPE_CHECKING:
    from crowds.interface.costs import FeeRule

# Imported by the crowd's services (crowds.services), so this module imports the backends and their costs
# inside its functions: at import time it needs the models alone.
CENT = Decimal("0.01")
# The share of the cap that sends the budget warning (docs/design.md §16).
WARNING_SHARE = Decimal("0.80")
# The first key of the transaction-level advisory lock that orders a benchmark's budget checks (the second
# is the benchmark's id).
BUDGET_LOCK_SPACE = 170_003


class BudgetExceeded(ValueError):
    """What was asked would take the benchmark past its cap; the message says what it costs and what remains."""


@dataclass(frozen=True)
class BurnDay:
    day: date
    spent: Decimal
    # The cap less what was spent up to the end of that day (None without a cap).
    remaining: Decimal | None


@dataclass(frozen=True)
class BudgetStatus:
    cap: Decimal | None
    spent: Decimal
    committed: Decimal
    burn: list[BurnDay]

    @property
    def remaining(self) -> Decimal | None:
        return None if self.cap is None else self.cap - self.spent - self.committed

    @property
    def used_share(self) -> float | None:
        """Spent and committed over the cap (1.0 is all of it); None without a cap."""
        if self.cap is None:
            return None
        if self.cap <= 0:
            return 1.0
        return float((self.spent + self.committed) / self.cap)

    @property
    def percent_spent(self) -> float:
        return 0.0 if not self.cap else min(100.0, float(100 * self.spent / self.cap))

    @property
    def percent_committed(self) -> float:
        return 0.0 if not self.cap else min(100.0 - self.percent_spent, float(100 * self.committed / self.cap))

    def as_dict(self) -> dict[str, object]:
        return {
            "cap": None if self.cap is None else str(self.cap),
            "spent": str(self.spent),
            "committed": str(self.committed),
            "remaining": None if self.remaining is None else str(self.remaining),
            "burn": [
                {
                    "day": day.day.isoformat(),
                    "spent": str(day.spent),
                    "remaining": None if day.remaining is None else str(day.remaining),
                }
                for day in self.burn
            ],
        }


def _batch_prices(benchmark: Benchmark) -> dict[int, tuple[Decimal, FeeRule, bool]]:
    """Each batch of the benchmark: its reward, its crowd's fees, and whether that crowd pays (remote)."""
    from crowds.interface import get_backend

    found = {}
    for batch_id, reward, backend_name in shaped_rows(_price_rows, benchmark.pk):
        backend = get_backend(backend_name)
        found[batch_id] = (reward, backend.fees, backend.remote)
    return found


def _price_rows(benchmark_id: int) -> QuerySet[Batch, tuple[int, Decimal, str]]:
    return Batch.objects.filter(benchmark_id=benchmark_id).values_list("pk", "reward", "backend")


def _cap_rows(benchmark_id: int) -> QuerySet[CrowdLimits, tuple[Decimal | None]]:
    return CrowdLimits.objects.filter(benchmark_id=benchmark_id).order_by("pk").values_list("budget_cap")[:1]


def _spent_rows(benchmark_id: int) -> QuerySet[Assignment, tuple[int, int, date | None, int]]:
    return (
        Assignment.objects.filter(_spent_work(benchmark_id))
        .annotate(day=TruncDate("submitted_at"))
        .values_list("hit__batch_id", "hit__assignments_required", "day")
        .annotate(count=Count("id"))
        .order_by()
    )


def _bonus_rows(benchmark_id: int) -> QuerySet[Bonus, tuple[int, Decimal, str, datetime | None]]:
    return (
        Bonus.objects.filter(
            assignment__hit__batch__benchmark_id=benchmark_id, status__in=[BonusStatus.SENT, BonusStatus.PENDING]
        )
        .values_list("assignment__hit__batch_id", "amount", "status", "sent_at")
        .order_by()
    )


def _undecided_rows(benchmark_id: int) -> QuerySet[Assignment, tuple[int, int, int]]:
    return (
        Assignment.objects.filter(
            hit__batch__benchmark_id=benchmark_id,
            hit__batch__backend__in=_remote_backends(),
            status=AssignmentStatus.SUBMITTED,
            external_unknown=False,
        )
        .values_list("hit__batch_id", "hit__assignments_required")
        .annotate(count=Count("id"))
        .order_by()
    )


def _local_claim_rows(benchmark_id: int) -> QuerySet[Assignment, tuple[int, int, int]]:
    from hits.selectors.shares import budgeted_condition

    return (
        Assignment.objects.filter(
            budgeted_condition("hit__"),
            status=AssignmentStatus.CLAIMED,
            external_id="",
            hit__batch__benchmark_id=benchmark_id,
        )
        .values_list("hit__batch_id", "hit__assignments_required")
        .annotate(count=Count("id"))
        .order_by()
    )


def _reserved_rows(benchmark_id: int, since: datetime) -> QuerySet[BudgetReservation, tuple[Decimal]]:
    return BudgetReservation.objects.filter(benchmark_id=benchmark_id, created_at__gt=since).values_list("amount")


def _shape_key() -> tuple[object, ...]:
    """What the budget's statements depend on besides their arguments: the crowds that pay, and the
    time zone whose days the spending is counted in (``crowdlex.statements.shaped_rows``)."""
    return (tuple(_remote_backends()), timezone.get_current_timezone_name())


def _work_cost(prices: dict[int, tuple[Decimal, FeeRule, bool]], rows: list[tuple[int, int, int]]) -> Decimal:
    """The cost of (batch, HIT size, assignments) rows at their batches' prices."""
    from crowds.interface.costs import assignments_cost

    total = Decimal("0.00")
    for batch_id, hit_size, count in rows:
        reward, fees, _ = prices[batch_id]
        total += assignments_cost(reward=reward, count=count, hit_size=hit_size, fees=fees)
    return total


def _spent_work(benchmark: Benchmark | int) -> Q:
    """Paid work: approved on a crowd; on the local queue, submitted and not rejected."""
    remote = _remote_backends()
    return Q(hit__batch__benchmark=benchmark) & (
        Q(status=AssignmentStatus.APPROVED, hit__batch__backend__in=remote)
        | (Q(status__in=[AssignmentStatus.SUBMITTED, AssignmentStatus.APPROVED]) & ~Q(hit__batch__backend__in=remote))
    )


def _remote_backends() -> list[str]:
    """The crowds that pay workers and keep their own record (``CrowdBackend.remote``)."""
    from crowds.interface import remote_backend_names

    return remote_backend_names()


def budget_status(*, benchmark: Benchmark, now: datetime | None = None, kept: bool = False) -> BudgetStatus:
    """Spent, committed and remaining under the benchmark's cap, and the burn-down of the last
    ``BUDGET_BURNDOWN_DAYS`` days (what was spent each day and what remained under the cap after it).

    A handful of grouped statements: work and bonuses by batch and HIT size, and free slots of
    offered HITs by batch and HIT size. ``kept``: the free slots from the figures kept per target and
    the live claims (``_kept_open_slots_cost``, the same figure), as the pages show them; the check
    reads every offered HIT itself."""
    now = now or timezone.now()
    # The statements built by the ORM once per process (``crowdlex.statements.shaped_rows``): the
    # pages read the budget after every change of the benchmark.
    key = _shape_key()
    cap = next((found for (found,) in shaped_rows(_cap_rows, benchmark.pk, key=key)), None)
    prices = _batch_prices(benchmark)
    remote = _remote_backends()
    spent_rows = shaped_rows(_spent_rows, benchmark.pk, key=key)
    by_day: dict[date | None, Decimal] = defaultdict(lambda: Decimal("0.00"))
    for batch_id, hit_size, day, count in spent_rows:
        by_day[day] += _work_cost(prices, [(batch_id, hit_size, count)])
    bonuses = shaped_rows(_bonus_rows, benchmark.pk, key=key)
    pending_bonuses = Decimal("0.00")
    for batch_id, amount, status, sent_at in bonuses:
        _, fees, _ = prices[batch_id]
        cost = amount + fees.bonus_fee(amount)
        if status == BonusStatus.SENT:
            by_day[sent_at.date() if sent_at else None] += cost
        else:
            pending_bonuses += cost
    spent = sum(by_day.values(), Decimal("0.00"))
    undecided = shaped_rows(_undecided_rows, benchmark.pk, key=key)
    committed = (
        _work_cost(prices, undecided)
        + pending_bonuses
        + (_kept_open_slots_cost(benchmark, prices) if kept else _open_slots_cost(benchmark, prices, remote))
        + _reserved(benchmark, now)
    )
    return BudgetStatus(
        cap=cap,
        spent=spent.quantize(CENT),
        committed=committed.quantize(CENT),
        burn=_burn(by_day, cap=cap, today=timezone.localdate(now)),
    )


def budget_status_shown(*, benchmark: Benchmark) -> BudgetStatus:
    """``budget_status`` as the pages show it: from the benchmark's cached figures, once per change
    of the benchmark and per day (the burn-down ends today)."""
    today = timezone.localdate()
    return benchmark_cached(
        benchmark=benchmark,
        name=f"budget:{today.isoformat()}",
        compute=lambda: budget_status(benchmark=benchmark, kept=True),
    )


def _open_slots_cost(
    benchmark: Benchmark, prices: dict[int, tuple[Decimal, FeeRule, bool]], remote: list[str]
) -> Decimal:
    """What the free slots of the HITs still offered to their crowds cost, read from every such HIT."""
    posted = Exists(RemoteHIT.objects.filter(hit=OuterRef("pk"), round=0))
    offered = (
        HIT.objects.filter(batch__benchmark=benchmark, batch__status=BatchStatus.OPEN)
        .exclude(target__stage=TargetStage.DONE)
        .filter(assignments_active__lt=F("assignments_required"))
        .filter(~Q(batch__backend__in=remote) | posted)
        .values_list("batch_id", "assignments_required")
        .annotate(free=Sum(F("assignments_required") - F("assignments_active")))
        .order_by()
    )
    return _work_cost(prices, list(offered))


def _kept_open_slots_cost(benchmark: Benchmark, prices: dict[int, tuple[Decimal, FeeRule, bool]]) -> Decimal:
    """``_open_slots_cost`` from the slots each target's HITs keep free before claims (the figures
    kept per target, ``hits.selectors.shares``: after a submit only its target is counted again), less
    the live local claims on those HITs, read apart (one statement bounded by the claims in progress:
    a claim moves no change key). A HIT's counter is its valid work and live local claims, never above
    its required assignments (``hits.slots``), so the difference is the sum of each HIT's free slots."""
    from hits.selectors.shares import target_shares

    free: Counter[tuple[int, int]] = Counter()
    for batch_id, share in target_shares(benchmark_id=benchmark.pk).total.items():
        for size, count in share.budget_sizes:
            free[(batch_id, size)] += count
    claims = shaped_rows(_local_claim_rows, benchmark.pk, key=_shape_key())
    for batch_id, size, count in claims:
        free[(batch_id, size)] -= count
    return _work_cost(prices, [(batch_id, size, count) for (batch_id, size), count in sorted(free.items()) if count])


def _reserved(benchmark: Benchmark, now: datetime) -> Decimal:
    """What publishes under way have set aside (``BudgetReservation``), those younger than
    ``BUDGET_RESERVATION_HOURS``: an older one was left by a run that died."""
    since = now - timedelta(hours=settings.BUDGET_RESERVATION_HOURS)
    # Summed here: the few publishes under way, by the statement built once (``shaped_rows``).
    return sum((amount for (amount,) in shaped_rows(_reserved_rows, benchmark.pk, since)), Decimal("0.00"))


def _burn(by_day: dict[date | None, Decimal], *, cap: Decimal | None, today: date) -> list[BurnDay]:
    days = settings.BUDGET_BURNDOWN_DAYS
    first = today - timedelta(days=days - 1)
    before = sum((cost for day, cost in by_day.items() if day is None or day < first), Decimal("0.00"))
    burn = []
    total = before
    for offset in range(days):
        day = first + timedelta(days=offset)
        cost = by_day.get(day, Decimal("0.00"))
        total += cost
        burn.append(BurnDay(day=day, spent=cost.quantize(CENT), remaining=None if cap is None else cap - total))
    return burn


def budget_check(*, benchmark: Benchmark | int, cost: Decimal, what: str) -> BudgetStatus:
    """Refuse ``what`` (in words: "publishing batch 12") when its ``cost`` would take the benchmark's
    spent and committed money past its cap (``BudgetExceeded``, saying what it costs and what remains);
    returns the status it was checked against. Without a cap, or at no cost, anything passes."""
    benchmark = benchmark if isinstance(benchmark, Benchmark) else Benchmark.objects.get(pk=benchmark)
    if connection.in_atomic_block:
        # Inside a transaction that writes what it allows, the check waits for the benchmark's others.
        dialect().advisory_lock(BUDGET_LOCK_SPACE, benchmark.pk)
    status = budget_status(benchmark=benchmark)
    remaining = status.remaining
    if remaining is None or cost <= 0 or cost <= remaining:
        return status
    raise BudgetExceeded(
        f"{what} would cost ${cost:.2f}, but only ${max(remaining, Decimal(0)):.2f} remains of "
        f"{benchmark.name}'s budget cap of ${status.cap:.2f} (${status.spent:.2f} spent, "
        f"${status.committed:.2f} committed): raise the cap in the benchmark's settings, or commit less"
    )


def budget_reserve(
    *, benchmark: Benchmark | int, cost: Decimal, what: str, batch: Batch | None = None
) -> BudgetReservation | None:
    """Check ``cost`` against the cap as ``budget_check`` does and set it aside, in one transaction under
    the benchmark's lock: a concurrent check waits for it and then counts the reservation as committed.
    Returns the reservation (None without a cap or at no cost: nothing to set aside); the caller calls
    ``budget_release`` once what it allowed counts by itself, or failed."""
    benchmark = benchmark if isinstance(benchmark, Benchmark) else Benchmark.objects.get(pk=benchmark)
    with transaction.atomic():
        status = budget_check(benchmark=benchmark, cost=cost, what=what)
        if status.cap is None or cost <= 0:
            return None
        return BudgetReservation.objects.create(benchmark=benchmark, batch=batch, amount=cost, what=what[:200])


def budget_release(*, reservation: BudgetReservation | None) -> None:
    """Let go of a reservation (``budget_reserve``); none, or one already let go, changes nothing."""
    if reservation is not None:
        BudgetReservation.objects.filter(pk=reservation.pk).delete()


def hits_cost(*, batch: Batch, hit_sizes: list[int]) -> Decimal:
    """What HITs of these sizes (their assignments each) of ``batch`` cost on its crowd: its ``price``."""
    from crowds.interface import get_backend

    return get_backend(batch.backend).price(assignments_per_hit=hit_sizes, reward=batch.reward).total
