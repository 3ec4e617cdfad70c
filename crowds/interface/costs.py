"""What a batch costs on a paid crowd, and what it pays per hour: pure functions, no database.

Each crowd's fee is a ``FeeRule`` its backend declares (``CrowdBackend.fees``): a rate of every
reward and bonus, a higher rate for the rewards of HITs from some size on, a least fee per payment
(crowds/mturk/fees.py, crowds/prolific/backend.py). Fees are computed per payment and rounded to
the cent. SWORDS paid $0.10 per assignment aiming at $15 per hour (Lee et al. 2021,
App. B); Prolific refuses a study that pays less than its minimum hourly rate.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal
from typing import Any

CENT = Decimal("0.01")
SWORDS_HOURLY_WAGE = Decimal("15.00")


@dataclass(frozen=True)
class FeeRule:
    """A crowd's fee on each payment: ``rate`` of it, ``large_rate`` on the rewards of HITs with
    ``large_from`` or more assignments (None: no such tier), never under ``minimum`` (0: none)."""

    rate: Decimal
    large_rate: Decimal | None = None
    large_from: int | None = None
    minimum: Decimal = Decimal("0.00")

    def rate_for(self, hit_size: int) -> Decimal:
        if self.large_rate is not None and self.large_from is not None and hit_size >= self.large_from:
            return self.large_rate
        return self.rate

    def fee(self, amount: Decimal, rate: Decimal | None = None) -> Decimal:
        """The fee on one payment, rounded to the cent."""
        if amount <= 0 or not self.rate:
            return Decimal("0.00")
        value = (amount * (self.rate if rate is None else rate)).quantize(CENT, rounding=ROUND_HALF_UP)
        return max(self.minimum, value)

    def reward_fee(self, reward: Decimal, hit_size: int) -> Decimal:
        return self.fee(reward, self.rate_for(hit_size))

    def bonus_fee(self, amount: Decimal) -> Decimal:
        """Bonuses pay the base rate whatever the HIT's size."""
        return self.fee(amount)


NO_FEES = FeeRule(rate=Decimal("0"))


def bonus_fee(amount: Decimal, fees: FeeRule) -> Decimal:
    """The crowd's fee on a bonus (its rate, at least its least fee, whatever the HIT's size)."""
    return fees.bonus_fee(amount)


def bonus_cost(amount: Decimal, fees: FeeRule) -> Decimal:
    """What a bonus costs the requester: the bonus and its fee."""
    return amount + fees.bonus_fee(amount)


def hourly_wage(reward: Decimal, seconds_per_assignment: float | None) -> Decimal | None:
    """The wage a reward implies at a given working time; None when the time is unknown or zero."""
    if seconds_per_assignment is None or seconds_per_assignment <= 0:
        return None
    return (reward * Decimal(3600) / Decimal(str(seconds_per_assignment))).quantize(CENT, rounding=ROUND_HALF_UP)


def reward_for_wage(wage: Decimal, seconds_per_assignment: float | None) -> Decimal | None:
    """The smallest reward, in whole cents, that pays at least ``wage`` per hour."""
    if seconds_per_assignment is None or seconds_per_assignment <= 0:
        return None
    return (wage * Decimal(str(seconds_per_assignment)) / Decimal(3600)).quantize(CENT, rounding=ROUND_CEILING)


def median_seconds(durations: Iterable[float | None]) -> float | None:
    """The median of the measured times, ignoring missing and non-positive ones."""
    values = [float(value) for value in durations if value is not None and value > 0]
    return statistics.median(values) if values else None


@dataclass(frozen=True)
class CostEstimate:
    """The cost of paying every assignment of a set of HITs once, with the crowd's fee."""

    hits: int
    assignments: int
    reward: Decimal
    rewards_total: Decimal
    fees_total: Decimal
    total: Decimal
    # HITs large enough to pay the crowd's higher fee.
    large_hits: int
    median_seconds: float | None
    hourly_wage: Decimal | None
    target_hourly_wage: Decimal
    reward_for_target_wage: Decimal | None
    # The least the crowd lets a study pay per hour (Prolific), or None where it sets none.
    minimum_hourly_wage: Decimal | None = None
    # The rate of the crowd's fee on rewards, for the plan's text.
    fee_rate: Decimal = Decimal("0")

    @property
    def below_minimum(self) -> bool:
        return (
            self.minimum_hourly_wage is not None
            and self.hourly_wage is not None
            and self.hourly_wage < self.minimum_hourly_wage
        )

    @property
    def cost_per_assignment(self) -> Decimal | None:
        if not self.assignments:
            return None
        return (self.total / self.assignments).quantize(CENT, rounding=ROUND_HALF_UP)

    def as_dict(self) -> dict[str, object]:
        return {
            "hits": self.hits,
            "assignments": self.assignments,
            "reward": str(self.reward),
            "rewards_total": str(self.rewards_total),
            "fees_total": str(self.fees_total),
            "total": str(self.total),
            "large_hits": self.large_hits,
            "median_seconds": self.median_seconds,
            "hourly_wage": None if self.hourly_wage is None else str(self.hourly_wage),
            "target_hourly_wage": str(self.target_hourly_wage),
            "reward_for_target_wage": None if self.reward_for_target_wage is None else str(self.reward_for_target_wage),
            "minimum_hourly_wage": None if self.minimum_hourly_wage is None else str(self.minimum_hourly_wage),
        }


def cost_estimate(
    *,
    assignments_per_hit: Sequence[int],
    reward: Decimal,
    with_fee: bool = True,
    seconds_per_assignment: float | None = None,
    target_hourly_wage: Decimal = SWORDS_HOURLY_WAGE,
    fees: FeeRule = NO_FEES,
    minimum_hourly_wage: Decimal | None = None,
) -> CostEstimate:
    """The cost of HITs with the given numbers of assignments, each paid ``reward``, with the
    crowd's ``fees`` (none unless given).

    ``with_fee=False`` prices a crowd that takes no fee (the local queue).
    """
    assignments = sum(assignments_per_hit)
    rewards_total = reward * assignments
    fees_total = Decimal("0.00")
    large_hits = 0
    for count in assignments_per_hit:
        rate = fees.rate_for(count)
        large_hits += rate != fees.rate
        if with_fee:
            fees_total += fees.fee(reward, rate) * count
    return CostEstimate(
        hits=len(assignments_per_hit),
        assignments=assignments,
        reward=reward,
        rewards_total=rewards_total.quantize(CENT),
        fees_total=fees_total.quantize(CENT),
        total=(rewards_total + fees_total).quantize(CENT),
        large_hits=large_hits if with_fee else 0,
        median_seconds=seconds_per_assignment,
        hourly_wage=hourly_wage(reward, seconds_per_assignment),
        target_hourly_wage=target_hourly_wage,
        reward_for_target_wage=reward_for_wage(target_hourly_wage, seconds_per_assignment),
        minimum_hourly_wage=minimum_hourly_wage,
        fee_rate=fees.rate if with_fee else Decimal("0"),
    )


def assignments_cost(*, reward: Decimal, count: int, hit_size: int, fees: FeeRule) -> Decimal:
    """What ``count`` paid assignments of a HIT of ``hit_size`` assignments cost: rewards and fees."""
    return (reward + fees.reward_fee(reward, hit_size)) * count


class PricedByFees:
    """The cost rule of a crowd that charges its ``fees`` on rewards (``cost_estimate``): a backend
    inherits ``price`` and ``cost_estimate`` and overrides either where its rule differs (a minimum
    wage, another duration estimate)."""

    fees: FeeRule

    def price(
        self, *, assignments_per_hit: Sequence[int], reward: Decimal, seconds_per_assignment: float | None = None
    ) -> CostEstimate:
        return cost_estimate(
            assignments_per_hit=assignments_per_hit,
            reward=reward,
            seconds_per_assignment=seconds_per_assignment,
            fees=self.fees,
        )

    def cost_estimate(self, *, batch: Any, median_seconds: float | None = None) -> CostEstimate:
        """``price`` of the batch's HITs (``batch``: a ``hits`` batch, which this layer does not import)."""
        counts = list(batch.hits.values_list("assignments_required", flat=True))
        return self.price(assignments_per_hit=counts, reward=batch.reward, seconds_per_assignment=median_seconds)
