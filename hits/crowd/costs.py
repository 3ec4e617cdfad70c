"""What a batch costs on a paid crowd, and what it pays per hour: pure functions, no database.

MTurk's fee, as published in its pricing: 20 % of every reward and bonus, 40 % for the rewards of
HITs with 10 or more assignments, and at least $0.01 per assignment or bonus. Fees are computed
per assignment and rounded to the cent, as MTurk charges them. SWORDS paid $0.10 per assignment
aiming at $15 per hour (Lee et al. 2021, App. B).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")
MTURK_FEE_RATE = Decimal("0.20")
MTURK_LARGE_HIT_FEE_RATE = Decimal("0.40")
# A HIT with this many assignments or more pays the higher fee.
MTURK_LARGE_HIT_ASSIGNMENTS = 10
MTURK_MIN_FEE = Decimal("0.01")
SWORDS_HOURLY_WAGE = Decimal("15.00")


def mturk_fee_rate(max_assignments: int) -> Decimal:
    """The fee rate on the rewards of a HIT with this many assignments."""
    return MTURK_LARGE_HIT_FEE_RATE if max_assignments >= MTURK_LARGE_HIT_ASSIGNMENTS else MTURK_FEE_RATE


def mturk_fee(amount: Decimal, rate: Decimal) -> Decimal:
    """The fee on one payment (a reward or a bonus): the rate, rounded to the cent, at least $0.01."""
    if amount <= 0:
        return Decimal("0.00")
    return max(MTURK_MIN_FEE, (amount * rate).quantize(CENT, rounding=ROUND_HALF_UP))


def bonus_fee(amount: Decimal) -> Decimal:
    """MTurk's fee on a bonus: always 20 % (at least $0.01), whatever the HIT's size."""
    return mturk_fee(amount, MTURK_FEE_RATE)


def bonus_cost(amount: Decimal) -> Decimal:
    """What a bonus costs the requester: the bonus and its fee."""
    return amount + bonus_fee(amount)


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
    # HITs with 10 or more assignments, which pay the higher fee.
    large_hits: int
    median_seconds: float | None
    hourly_wage: Decimal | None
    target_hourly_wage: Decimal
    reward_for_target_wage: Decimal | None

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
        }


def cost_estimate(
    *,
    assignments_per_hit: Sequence[int],
    reward: Decimal,
    with_fee: bool = True,
    seconds_per_assignment: float | None = None,
    target_hourly_wage: Decimal = SWORDS_HOURLY_WAGE,
) -> CostEstimate:
    """The cost of HITs with the given numbers of assignments, each paid ``reward``.

    ``with_fee=False`` prices a crowd that takes no fee (the local queue).
    """
    assignments = sum(assignments_per_hit)
    rewards_total = reward * assignments
    fees_total = Decimal("0.00")
    large_hits = 0
    for count in assignments_per_hit:
        rate = mturk_fee_rate(count)
        large_hits += rate == MTURK_LARGE_HIT_FEE_RATE
        if with_fee:
            fees_total += mturk_fee(reward, rate) * count
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
    )


def assignments_cost(*, reward: Decimal, count: int, hit_size: int) -> Decimal:
    """What ``count`` paid assignments of a HIT of ``hit_size`` assignments cost: rewards and fees."""
    return (reward + mturk_fee(reward, mturk_fee_rate(hit_size))) * count
